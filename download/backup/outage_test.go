package backup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
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
	assert.NotContains(t, err.Error(), "in a row", "one refused connection is enough")
	assert.Equal(t, 3, sum.New)
	assert.Equal(t, 0, sum.Failed, "files not attempted are not failed")
	assert.Len(t, e.kinds(FileFailed), 0)
	// The next page of the listing, asked for while the page before it
	// downloads, retries on its own too; of the downloads, only one file's
	// attempts were made.
	downloads := 0
	for _, ev := range e.kinds(Retrying) {
		if strings.Contains(ev.Err.Error(), "/files/download/") {
			downloads++
		}
	}
	assert.Equal(t, o.Policy.MaxAttempts-1, downloads, "only one file's attempts")
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
	mu.Lock()
	assert.NotZero(t, probes, "the outage is confirmed by a probe")
	mu.Unlock()
	var ue *UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, OutageAfter, ue.InARow)
	assert.Contains(t, err.Error(), "the run stopped after 3 files or listings in a row could not connect")
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
	o.Record = func(*Summary, error) (*folder.RunRecord, bool) {
		return &folder.RunRecord{Outcome: folder.OutcomeOK}, true
	}
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.FileExists(t, folder.At(e.dir).LastRunPath())
	o.Record = func(*Summary, error) (*folder.RunRecord, bool) {
		// The temp area turns into a file: no record can be written.
		tmp := folder.At(e.dir).Temp()
		require.NoError(t, os.RemoveAll(tmp))
		require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o644))
		return &folder.RunRecord{Outcome: folder.OutcomeOK}, false
	}
	_, err = Run(context.Background(), o)
	require.ErrorContains(t, err, "recording the run")
	assert.NoFileExists(t, folder.At(e.dir).LastRunPath())
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

// Every run counts what the filters keep out, not only the run that first
// left it out, and the albums they do not take.
func TestLeftOutIsCountedEveryRun(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 10, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "pic.jpg", Size: 10, Seed: 2})
	a.AddFile(enteapitest.FileSpec{Title: "pic2.jpg", Size: 10, Seed: 4})
	e.u.AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10, Seed: 3})
	f := filter.Set{SkipVideos: true, Albums: filter.Albums{Include: []string{"A"}}}
	for run := range 2 {
		sum := e.runWith(f)
		assert.Equal(t, 1, sum.LeftOut, "run %d", run)
		assert.Equal(t, 1, sum.AlbumsLeftOut, "run %d", run)
	}
}

// A file kept with a hash mismatch is restored like any other; a file
// that never saved is not "missing".
func TestMismatchedFileIsRestoredAndFailedIsNot(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	odd := a.AddFile(enteapitest.FileSpec{Title: "odd.jpg", Size: 100, Hash: "Ym9ndXMgaGFzaA=="})
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(3), 8)...)
	sum := e.mustRun()
	require.Equal(t, 1, sum.HashMismatches)
	require.Equal(t, 1, sum.Failed)
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "odd.jpg")))
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(3), 8)...)
	sum = e.mustRun()
	assert.Equal(t, 1, sum.LocalRestored)
	e.same("A/odd.jpg", odd.Plaintext())
	assert.Equal(t, 1, sum.Failed, "the failed file is retried as failed, not restored")
}

// A refusal is recorded only in a folder that holds a backup, and the
// next run that starts removes it.
func TestRefusalRecordAndItsEnd(t *testing.T) {
	e := newEnv(t)
	e.tenFiles()
	missing := filepath.Join(e.dir, "not-mounted")
	require.NoError(t, folder.At(missing).WriteRefusal(folder.Refusal{ExitCode: 5}))
	assert.NoDirExists(t, missing, "a missing folder is never created")
	odd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(odd, folder.StateDir), []byte("x"), 0o644))
	var de *DirError
	require.ErrorAs(t, folder.At(odd).WriteRefusal(folder.Refusal{ExitCode: 4}), &de)
	assert.Contains(t, de.Error(), "has a .quak that is not a folder")

	o := e.options()
	o.Record = func(*Summary, error) (*folder.RunRecord, bool) {
		return &folder.RunRecord{Outcome: folder.OutcomeOK}, true
	}
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.NoError(t, folder.At(e.dir).WriteRefusal(folder.Refusal{ExitCode: 4}))
	require.FileExists(t, folder.At(e.dir).RefusalPath())
	_, err = Run(context.Background(), o)
	require.NoError(t, err)
	assert.NoFileExists(t, folder.At(e.dir).RefusalPath())
}

// A live photo missing one of its two parts is downloaded again whole.
func TestLivePhotoPartDeletedIsRestored(t *testing.T) {
	e := newEnv(t)
	e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "IMG_7.HEIC", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("the still"), "mov", []byte("the motion"))})
	e.mustRun()
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "IMG_7.mov")))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.LocalRestored)
	assert.Equal(t, []byte("the motion"), e.read("A/IMG_7.mov"))
	assert.Equal(t, []byte("the still"), e.read("A/IMG_7.heic"))
}

// observe counts connection failures in a row; an answer of any kind
// starts again, a refusal stops at once, a cancelled run counts nothing.
func TestOutageObserve(t *testing.T) {
	ctx := context.Background()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	var o outage
	require.NoError(t, o.observe(ctx, reset))
	require.NoError(t, o.observe(ctx, reset))
	require.NoError(t, o.observe(ctx, &errs.ApiError{Status: 503}), "an answer, even an error")
	require.NoError(t, o.observe(ctx, reset))
	require.NoError(t, o.observe(ctx, nil))
	require.NoError(t, o.observe(ctx, reset))
	require.NoError(t, o.observe(ctx, reset))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, o.observe(canceled, reset), "a run that is stopping anyway")
	require.NoError(t, o.observe(canceled, refused))
	var ue *UnreachableError
	require.ErrorAs(t, o.observe(ctx, reset), &ue)
	assert.Equal(t, 3, ue.InARow, "the cancelled outcomes did not count")

	var fresh outage
	require.ErrorAs(t, fresh.observe(ctx, refused), &ue)
	assert.Equal(t, 1, ue.InARow)
}
