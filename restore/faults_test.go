package restore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Every answer of the upload path refused, lost or cut, once (retries
// absorb it) or until the file fails: a second run ends with each
// original once, in its albums, with its metadata.
func TestRestoreEveryAnswerCutLostOrRefusedEndsExactlyOnce(t *testing.T) {
	routes := []string{"POST /collections", "POST /files/upload-url", "POST /files", "POST /collections/add-files",
		"GET /collections/v2/diff", "GET /users/details/v2", "UPLOAD " + enteapitest.StepPut}
	faults := map[string]enteapitest.Fault{
		"refused": enteapitest.Status(500), "lost": enteapitest.LoseResponse(), "cut": enteapitest.CutAfter(3),
	}
	for _, route := range routes {
		for name, f := range faults {
			for _, n := range []int{1, 4} {
				for _, c := range []int{1, 4} {
					t.Run(fmt.Sprintf("%s/%s/%d/%d-at-once", route, name, n, c), func(t *testing.T) {
						everyAnswer(t, route, enteapitest.Repeat(f, n), c)
					})
				}
			}
		}
	}
}

func everyAnswer(t *testing.T, route string, faults []enteapitest.Fault, concurrency int) {
	t.Helper()
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.s.Inject(route, faults...)
	o := e.options()
	o.Concurrency = concurrency
	_, _ = e.restoreWith(o)
	e.s.ClearFaults(route)
	sum := e.mustRestore()
	assert.Equal(t, 0, sum.Failed)
	e.sameAsSource()
}

// A commit whose answer is lost, then a run stopped before it could look:
// the next run finds the file in its album since the cursor and sends
// nothing again.
func TestRestoreConfirmsALostCommitByListingNotBySendingAgain(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.LoseResponse())
	e.s.Inject("GET /collections/v2/diff", enteapitest.Status(401))
	_, err := e.restoreWith(e.options())
	require.Error(t, err, "the session refused: the run stops")
	require.Equal(t, 1, e.s.Requests("POST /files"))

	e.mustRestore()
	assert.Equal(t, 6, e.s.Requests("POST /files"), "the lost commit is never sent again")
	e.sameAsSource()
}

// A run stopped after the objects were sent: the next one resends the
// journal's body for them, minting and encrypting nothing new.
func TestRestoreResendsTheJournalsBodyAfterACrash(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.Status(401))
	_, err := e.restoreWith(e.options())
	require.Error(t, err)
	require.Equal(t, 2, e.s.Requests("POST /files/upload-url"), "one file's two objects")

	e.mustRestore()
	assert.Equal(t, 12, e.s.Requests("POST /files/upload-url"), "two objects a file, the first file's minted once")
	assert.Equal(t, 0, e.s.PendingUploads(), "no object left uncommitted")
	e.sameAsSource()
}

// A run stopped between every two requests of the upload path, again and
// again: each run goes one request further; the end is the same library.
func TestRestoreStoppedAtEveryStepEndsExactlyOnce(t *testing.T) {
	for _, c := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d-at-once", c), func(t *testing.T) { stoppedAtEveryStep(t, c) })
	}
}

func stoppedAtEveryStep(t *testing.T, concurrency int) {
	t.Helper()
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	o.Concurrency = concurrency
	for i := 0; i < 200; i++ {
		e.s.SetChaos(stopAfter(i))
		_, err := e.restoreWith(o)
		e.s.SetChaos(nil)
		if err == nil {
			break
		}
	}
	e.mustRestore()
	e.sameAsSource()
}

// stopAfter lets n API requests through, loses the answer to the next
// (the server acted on it) and refuses the session from then on: a run
// killed right after request n+1 was applied.
func stopAfter(n int) func(string) (enteapitest.Fault, bool) {
	var mu sync.Mutex
	seen := 0
	return func(string) (enteapitest.Fault, bool) {
		mu.Lock()
		defer mu.Unlock()
		seen++
		switch {
		case seen <= n:
			return enteapitest.Fault{}, false
		case seen == n+1:
			return enteapitest.LoseResponse(), true
		}
		return enteapitest.Status(401), true
	}
}
