package backup

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/pace"
)

// storeGets matches the store's downloads, for a Gate.
func storeGets(key string) bool { return strings.HasPrefix(key, "GET /store/") }

// museumDownloads matches museum's download redirects, for a Gate.
func museumDownloads(key string) bool { return strings.HasPrefix(key, "GET /files/download/") }

// inRounds lets n requests through g in rounds: each round waits until
// width of them are held (all that are left, in the last) and lets exactly
// those go, so that g.Most is the most quak sends at once. The first
// rounds take widths in turn; the last width is kept from then on.
func inRounds(g *enteapitest.Gate, n int, widths ...int) {
	for left, i := n, 0; left > 0; i++ {
		k := min(widths[min(i, len(widths)-1)], left)
		g.Release(g.Await(k)...)
		left -= k
	}
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

// Issue 20: on a link whose latency stays flat, quak grows the downloads
// in flight from where it starts up to its cap, and never above it.
func TestDownloadsInFlightGrowOnAFlatLink(t *testing.T) {
	e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
	want := smallLibrary(e, 150)
	const most = pace.Start + pace.Start/2
	// The first window's answers, all as fast as each other, grow the limit
	// by half: every round after the first holds the cap's worth at once.
	g := enteapitest.NewGate(t, e.s, storeGets, func(g *enteapitest.Gate) { inRounds(g, 150, pace.Start, most) })
	o := e.options()
	o.MaxConcurrency = most
	o.PaceClock = frozen // every answer as fast as the first: flat
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Failed)
	for rel, data := range want {
		e.same(rel, data)
	}
	assert.Equal(t, most, g.Most(), "grew to its cap, never above it")
	assert.Equal(t, 150, e.downloads(), "one request per file")
}

// --concurrency N fixes the number, whatever the link does.
func TestAFixedConcurrencyNeverMoves(t *testing.T) {
	e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
	smallLibrary(e, 60)
	g := enteapitest.NewGate(t, e.s, storeGets, func(g *enteapitest.Gate) { inRounds(g, 60, 3) })
	o := e.options()
	o.Concurrency = 3
	o.PaceClock = frozen
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Failed)
	assert.Equal(t, 3, g.Most())
}

// Issue 20: museum's 429 carries no Retry-After. quak halves what it sends
// and every file is saved: the rate limit slows the run down, it does not
// fail files.
func TestRateLimitSlowsDownInsteadOfFailing(t *testing.T) {
	const limit = 5
	for _, tc := range []struct {
		name    string
		wan     enteapitest.WAN
		limited func(key string) bool
	}{
		{"museum 429", enteapitest.WAN{APILimit: limit}, museumDownloads},
		{"store 503 SlowDown", enteapitest.WAN{StoreLimit: limit}, storeGets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
			want := smallLibrary(e, 150)
			e.s.SetWAN(tc.wan)
			// The first window's requests all in flight at once: all but
			// the limit's are refused as they arrive.
			enteapitest.NewGate(t, e.s, tc.limited, func(g *enteapitest.Gate) { inRounds(g, pace.Start, pace.Start) })
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
			assert.GreaterOrEqual(t, limited, pace.Start-limit, "the server refused requests")
			// Each refusal halves what is sent: far fewer than one per file.
			assert.Less(t, limited, 75)
		})
	}
}

// Without the limiter's extra attempts, the same 429s fail files: what
// the test above proves is the limiter's doing.
func TestRateLimitFailsFilesAtAFixedConcurrency(t *testing.T) {
	const width = 16
	e := newEnvWith(t, enteapitest.Config{PageSize: 2500})
	smallLibrary(e, 60)
	e.s.SetWAN(enteapitest.WAN{APILimit: 1})
	o := e.options()
	o.Concurrency = width
	// As many rounds as a file has attempts, each of sixteen requests in
	// flight at once, of which museum answers the first to arrive: a file
	// refused in every round has used all its attempts.
	attempts := o.Policy.MaxAttempts
	enteapitest.NewGate(t, e.s, museumDownloads, func(g *enteapitest.Gate) { inRounds(g, attempts*width, width) })
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	// Of the first round's files, at most one more is answered each round.
	assert.GreaterOrEqual(t, sum.Failed, width-attempts)
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
	const diff = "GET /collections/v2/diff"
	store := fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, first.ID)
	enteapitest.NewGate(t, e.s, func(key string) bool { return key == diff || key == store }, func(g *enteapitest.Gate) {
		g.Serve(diff) // the first page
		assert.ElementsMatch(t, []string{store, diff}, g.Await(2),
			"the second page is asked for while the first page's first download is held")
	})
	_, err := Run(context.Background(), e.options())
	require.NoError(t, err)
	assert.Equal(t, 3, e.s.Requests(diff), "each page listed once")
}
