package backup

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// gate is a WAN round trip that holds requests until want of them are
// held at once (then lets them all go), or until a short bound passes with
// fewer: the server sees exactly as many requests at once as quak sends.
type gate struct {
	mu      sync.Mutex
	want    int
	held    int
	release chan struct{}
}

func newGate(want int) *gate { return &gate{want: want, release: make(chan struct{})} }

func (g *gate) sleep(ctx context.Context, _ time.Duration) error {
	g.mu.Lock()
	g.held++
	rel := g.release
	if g.held >= g.want {
		close(g.release)
		g.release, g.held = make(chan struct{}), 0
	}
	g.mu.Unlock()
	t := time.NewTimer(25 * time.Millisecond) // quak sent fewer: let them go
	defer t.Stop()
	select {
	case <-rel:
	case <-t.C:
		g.mu.Lock()
		if g.release == rel {
			close(g.release)
			g.release, g.held = make(chan struct{}), 0
		}
		g.mu.Unlock()
	case <-ctx.Done():
	}
	return nil
}

// smallLibrary adds n files of 16 KiB in one album, listed in one page.
func smallLibrary(e *env, n int) map[string][]byte {
	a := e.u.AddAlbum("Many")
	want := map[string][]byte{}
	for i := range n {
		data := enteapitest.SampleJPEG(8, 8, byte(i))
		name := fmt.Sprintf("f%03d.jpg", i)
		a.AddFile(enteapitest.FileSpec{Title: name, Data: data})
		want["Many/"+name] = data
	}
	return want
}

func frozen() time.Time { return time.Unix(1_700_000_000, 0) }

// Issue 20: on a link whose latency stays flat, quak sends more requests
// at once than its old fixed 4, up to its cap and never above it.
func TestDownloadsInFlightGrowOnAFlatLink(t *testing.T) {
	e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
	want := smallLibrary(e, 150)
	g := newGate(12)
	e.s.SetWAN(enteapitest.WAN{Latency: 30 * time.Millisecond, Sleep: g.sleep})
	o := e.options()
	o.MaxConcurrency = 12
	o.PaceClock = frozen // every answer as fast as the first: flat
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Failed)
	for rel, data := range want {
		e.same(rel, data)
	}
	most, _ := e.s.InFlight()
	// Requests to museum and to the store take turns in flight, so the
	// store alone sees close to the cap.
	assert.GreaterOrEqual(t, most, 9, "grew well beyond the old fixed 4")
	assert.LessOrEqual(t, most, 12, "never above its cap")
	assert.Equal(t, 150, e.downloads(), "one request per file")
}

// --concurrency N fixes the number, whatever the link does.
func TestAFixedConcurrencyNeverMoves(t *testing.T) {
	e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
	smallLibrary(e, 60)
	g := newGate(8)
	e.s.SetWAN(enteapitest.WAN{Latency: 30 * time.Millisecond, Sleep: g.sleep})
	o := e.options()
	o.Concurrency = 3
	o.PaceClock = frozen
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Failed)
	most, _ := e.s.InFlight()
	assert.Equal(t, 3, most)
}

// Issue 20: museum's 429 carries no Retry-After. quak halves what it sends
// and every file is saved: the rate limit slows the run down, it does not
// fail files.
func TestRateLimitSlowsDownInsteadOfFailing(t *testing.T) {
	for _, tc := range []struct {
		name string
		wan  enteapitest.WAN
	}{
		{"museum 429", enteapitest.WAN{APILimit: 5}},
		{"store 503 SlowDown", enteapitest.WAN{StoreLimit: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
			want := smallLibrary(e, 150)
			g := newGate(16)
			w := tc.wan
			w.Latency, w.Sleep = 30*time.Millisecond, g.sleep
			e.s.SetWAN(w)
			o := e.options()
			o.MaxConcurrency = 24
			o.PaceClock = frozen
			sum, err := Run(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, 0, sum.Failed, "%v", sum.Failures)
			for rel, data := range want {
				e.same(rel, data)
			}
			_, limited := e.s.InFlight()
			assert.Positive(t, limited, "the server refused requests")
			// Each refusal halves what is sent: far fewer than one per file.
			assert.Less(t, limited, 75)
		})
	}
}

// Without the limiter's extra attempts, the same 429s fail files: what
// the test above proves is the limiter's doing.
func TestRateLimitFailsFilesAtAFixedConcurrency(t *testing.T) {
	e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
	smallLibrary(e, 60)
	g := newGate(16)
	e.s.SetWAN(enteapitest.WAN{APILimit: 1, Latency: 30 * time.Millisecond, Sleep: g.sleep})
	o := e.options()
	o.Concurrency = 16
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Positive(t, sum.Failed)
}

// Issue 20: the next page of a listing is asked for while the files of
// the page before it download.
func TestListingOverlapsDownloads(t *testing.T) {
	e := newEnv(t) // pages of 3
	a := e.u.AddAlbum("Pages")
	var first *enteapitest.File
	for i := range 7 {
		f := a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("p%d.jpg", i), Data: []byte{byte(i)}})
		if i == 0 {
			first = f
		}
	}
	release := make(chan struct{})
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, first.ID), enteapitest.Hold(release))
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), e.options())
		done <- err
	}()
	listed := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if e.s.Requests("GET /collections/v2/diff") >= 2 {
			listed = true
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	require.NoError(t, <-done)
	assert.True(t, listed, "the second page was listed while the first page's download was held")
	assert.Equal(t, 3, e.s.Requests("GET /collections/v2/diff"), "each page listed once")
}
