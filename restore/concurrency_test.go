package restore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/errs"
)

// awaitBound is how long a test waits for an event that must come: only a
// regression meets it.
func awaitBound() <-chan time.Time { return time.After(enteapitest.GateBound) }

func isPut(key string) bool { return strings.HasPrefix(key, "PUT ") }

// A restore sends several originals at once: four uploads are in flight
// together before any of them is answered.
func TestRestoreSendsSeveralOriginalsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	enteapitest.NewGate(t, e.s, isPut, func(g *enteapitest.Gate) { g.Await(4) })
	o := e.options()
	o.Concurrency = 4
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.Equal(t, 6, sum.Uploaded)
	e.sameAsSource()
}

// The default is several at once, not one.
func TestRestoreDefaultsToFourAtOnce(t *testing.T) {
	o := Options{}
	o.defaults()
	assert.Equal(t, 4, o.Concurrency)
}

// Two originals of one content (same bytes, type and title) in two albums
// of the backup, restored side by side: the second waits for the first
// and is added to its album, never uploaded a second time.
func TestRestoreUploadsOneContentOnceEvenSideBySide(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "same.jpg", Data: enteapitest.FakeJPEG("same")})
	e.src.AddAlbum("Family").AddFile(enteapitest.FileSpec{Title: "same.jpg", Data: enteapitest.FakeJPEG("same")})
	e.backup(e.src, e.dir)
	waited := make(chan struct{}, 2)
	// The first original's thumbnail is held until the second is seen to
	// wait for it; without that wait, the second's upload would arrive
	// instead and the gate's bound fail the test.
	enteapitest.NewGate(t, e.s, isPut, func(g *enteapitest.Gate) {
		g.Await(1)
		select {
		case <-waited:
		case <-awaitBound():
			assert.Fail(t, "the second original never waited for the first")
		}
	})
	o := e.options()
	o.Concurrency = 2
	o.keyWait = func(string) { waited <- struct{}{} }
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, 1, sum.Present)
	assert.Equal(t, 1, sum.Added, "the second album gets the first's file")
	assert.Equal(t, 1, e.s.Requests("POST /files"))
}

// A failure that ends the run (the session refused) stops every original
// in flight, and the run returns that error, not a cancellation.
func TestRestoreStopsEveryOriginalAtAFatalError(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.Status(401))
	o := e.options()
	o.Concurrency = 4
	sum, err := e.restoreWith(o)
	require.True(t, errors.Is(err, errs.ErrNotLoggedIn), "%v", err)
	assert.Zero(t, sum.Failed, "files stopped by the refusal are not failures")
	e.mustRestore()
	e.sameAsSource()
}
