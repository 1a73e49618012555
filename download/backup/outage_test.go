package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/state"
)

// tenFiles adds an album of ten small files.
func (e *env) tenFiles() []*enteapitest.File {
	a := e.u.AddAlbum("Trip")
	var fs []*enteapitest.File
	for i := range 10 {
		fs = append(fs, a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%02d.jpg", i), Size: 100, Seed: byte(i + 1)}))
	}
	return fs
}

// storeChaos has every object-store request from the n-th on (1-based)
// answered by f while on() says so.
func (e *env) storeChaos(f enteapitest.Fault, on func(n int) bool) {
	var mu sync.Mutex
	n := 0
	e.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if !strings.HasPrefix(route, "GET /store/") {
			return enteapitest.Fault{}, false
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		return f, on(n)
	})
}

func (e *env) failedRecords() int {
	n := 0
	st, err := state.Open(e.dir + "/.quak/state.db")
	require.NoError(e.t, err)
	defer func() { _ = st.Close() }()
	require.NoError(e.t, st.Files(func(f *state.File) error {
		if f.Status == state.Failed {
			n++
		}
		return nil
	}))
	return n
}

// The server stops in the middle of a run: the file that finds it gone
// ends the run with an *UnreachableError after its own attempts, and no
// file after it is tried or recorded as failed.
func TestServerGoneStopsTheRun(t *testing.T) {
	e := newEnv(t)
	e.tenFiles()
	o := e.options()
	o.Concurrency = 1
	saved := 0
	events := o.Events
	o.Events = func(ev Event) {
		events(ev)
		if ev.Kind == FileSaved {
			if saved++; saved == 3 {
				e.s.Close() // nothing is in flight: the next file finds no server
			}
		}
	}
	sum, err := Run(context.Background(), o)
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "connection refused")
	assert.Equal(t, 3, sum.New)
	assert.Equal(t, 0, sum.Failed, "files not attempted are not failed")
	assert.Len(t, e.kinds(FileFailed), 0)
	assert.Len(t, e.kinds(Retrying), o.Policy.MaxAttempts-1, "only one file's attempts")
	assert.Equal(t, 0, e.failedRecords())
}

// Resets on file after file (the store drops every connection, the probe
// of its host included) stop the run after OutageAfter files in a row,
// each recorded as it failed.
func TestConnectionFailuresInARowStopTheRun(t *testing.T) {
	e := newEnv(t)
	e.tenFiles()
	o := e.options()
	o.Concurrency = 1
	o.Policy.MaxAttempts = 1
	var mu sync.Mutex
	n, probes := 0, 0
	e.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case route == "GET /":
			probes++
			return enteapitest.LoseResponse(), true
		case strings.HasPrefix(route, "GET /store/"):
			n++
			return enteapitest.ResetAfter(0), n > 2
		}
		return enteapitest.Fault{}, false
	})
	sum, err := Run(context.Background(), o)
	assert.NotZero(t, probes, "the outage is confirmed by a probe")
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, OutageAfter, ue.InARow)
	assert.Equal(t, 2, sum.New)
	assert.Equal(t, OutageAfter-1, sum.Failed)
	assert.Equal(t, 2+OutageAfter, e.downloads(), "no file after the outage was tried")
}

// A blip, even one that costs whole files, does not stop a run: an answer
// between failures starts the count again.
func TestShortBlipDoesNotStopTheRun(t *testing.T) {
	t.Run("retried away", func(t *testing.T) {
		e := newEnv(t)
		fs := e.tenFiles()
		o := e.options()
		o.Concurrency = 1
		e.storeChaos(enteapitest.ResetAfter(0), func(n int) bool { return n >= 3 && n <= 5 })
		sum, err := Run(context.Background(), o)
		require.NoError(t, err)
		assert.Equal(t, 10, sum.New)
		assert.Equal(t, 0, sum.Failed)
		e.same("Trip/02.jpg", fs[2].Plaintext())
	})
	t.Run("files lost, then answers", func(t *testing.T) {
		e := newEnv(t)
		e.tenFiles()
		o := e.options()
		o.Concurrency = 1
		o.Policy.MaxAttempts = 1
		// Two files fail, one passes, two fail again: never OutageAfter in a row.
		e.storeChaos(enteapitest.ResetAfter(0), func(n int) bool { return n == 2 || n == 3 || n == 5 || n == 6 })
		sum, err := Run(context.Background(), o)
		require.NoError(t, err)
		assert.Equal(t, 6, sum.New)
		assert.Equal(t, 4, sum.Failed)
		sum, err = Run(context.Background(), e.options())
		require.NoError(t, err)
		assert.Equal(t, 4, sum.New, "the next run saves them")
	})
}

// With the API gone before the run lists anything, the run stops at the
// listing with an *UnreachableError.
func TestServerGoneBeforeTheListing(t *testing.T) {
	e := newEnv(t)
	e.tenFiles()
	e.s.Close()
	sum, err := e.run()
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.True(t, errors.Is(err, err))
	assert.Equal(t, 0, sum.Failed)
}

// A run that cannot write last-run.json leaves none behind: the previous
// run's record must not go on speaking for it.
func TestUnwritableRecordRemovesThePreviousOne(t *testing.T) {
	e := newEnv(t)
	e.tenFiles()
	o := e.options()
	o.Record = func(*Summary, error) (any, bool) { return map[string]any{"outcome": "ok"}, true }
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.FileExists(t, e.dir+"/.quak/"+LastRunFile)
	o.Record = func(*Summary, error) (any, bool) { return map[string]any{"bad": make(chan int)}, false }
	_, err = Run(context.Background(), o)
	require.ErrorContains(t, err, "recording the run")
	assert.NoFileExists(t, e.dir+"/.quak/"+LastRunFile)
}

// A saved file deleted from the backup folder comes back on the next run,
// reported as restored, not as new; so does a whole album folder.
func TestLocallyDeletedFileIsRestored(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	other := e.u.AddAlbum("Other")
	other.Add(fs[1])
	e.mustRun()
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Trip", "00.jpg")))
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Other", "01.jpg")))
	before := e.downloads()
	sum := e.mustRun()
	assert.Equal(t, 2, sum.LocalRestored)
	assert.Equal(t, 0, sum.New)
	assert.Len(t, e.kinds(LocalRestored), 2)
	assert.Equal(t, 2, e.downloads()-before)
	e.same("Trip/00.jpg", fs[0].Plaintext())
	e.same("Other/01.jpg", fs[1].Plaintext())
	assert.True(t, e.sameInode("Trip/01.jpg", "Other/01.jpg"), "the album copies are one file again")

	require.NoError(t, os.RemoveAll(filepath.Join(e.dir, "Trip")))
	sum = e.mustRun()
	assert.Equal(t, 10, sum.LocalRestored)
	for i, f := range fs {
		e.same(fmt.Sprintf("Trip/%02d.jpg", i), f.Plaintext())
	}
	sum = e.mustRun()
	assert.Equal(t, 0, sum.LocalRestored, "nothing is missing any more")
}
