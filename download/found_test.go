package download_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/pace"
)

// linkClock is the clock of a number of ranges found from the link: each
// reading of it is one more chunk read, which took per(n) at the n ranges
// being tried, so that the test, not the machine, says what more ranges
// bring.
type linkClock struct {
	mu     sync.Mutex
	t      time.Time
	ranges *pace.Ranges
	per    func(n int) time.Duration
}

func (c *linkClock) now() time.Time {
	n := c.ranges.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.per(n))
	return c.t
}

// foundFetcher fetches files of more than 8 MiB as up to 4 ranges at once,
// as many as pay on a link where a chunk takes per(n) at n ranges.
func (fx *fixture) foundFetcher(per func(n int) time.Duration) (*download.Fetcher, *pace.Ranges) {
	fe := fx.multiFetcher()
	c := &linkClock{t: time.Unix(0, 0), per: per}
	c.ranges = pace.FoundRanges(fe.Streams, c.now)
	fe.Ranges = c.ranges
	return fe, c.ranges
}

func (fx *fixture) fetchExact(fe *download.Fetcher, f *enteapitest.File) {
	fx.t.Helper()
	p, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
	require.NoError(fx.t, err)
	assert.True(fx.t, bytes.Equal(f.Plaintext(), readPartial(fx.t, p)), "content differs")
	assert.False(fx.t, p.HashMismatch)
}

// Issue 41: where one stream brings a file as fast as it is read (a
// chunk takes as long at any number of ranges, as on loopback), the first
// large file tries two ranges after a window as one stream, finds they
// bring nothing, and goes on as one stream again after the chunks the two
// took; a large file after it comes as one stream from its first byte to
// its last.
func TestRangesThatDoNotPayGoBackToOneStream(t *testing.T) {
	fx := setup(t)
	a := fx.album.AddFile(enteapitest.FileSpec{Title: "a.mp4", Size: 64 << 20, Seed: 21})
	b := fx.album.AddFile(enteapitest.FileSpec{Title: "b.mp4", Size: 40 << 20, Seed: 22})
	fe, found := fx.foundFetcher(func(int) time.Duration { return 100 * time.Millisecond })

	fx.fetchExact(fe, a)
	assert.Equal(t, 1, found.Now(), "two ranges brought nothing")
	// One stream for the window (4 chunks), then a chunk at a time from
	// there on, in two ranges, for the window at two (1 + 4 chunks) and
	// what they took before they stopped, then one stream to the end.
	ra := fx.s.Ranges(fx.storeRoute(a))
	require.Greater(t, len(ra), 2)
	assert.Equal(t, "", ra[0])
	var last int64
	_, err := fmt.Sscanf(ra[len(ra)-1], "bytes=%d-", &last)
	require.NoError(t, err)
	assert.Equal(t, closedRange(last, fx.target(a).Size-1), ra[len(ra)-1], "one stream to the end")
	assert.Zero(t, last%seg, "from a chunk's edge")
	assert.Equal(t, segments(4*seg, last), sortedCopy(ra[1:len(ra)-1]))
	assert.GreaterOrEqual(t, last, int64(9*seg), "not before the window at two ended")
	assert.Less(t, last, fx.target(a).Size-seg, "well before the end")

	fx.fetchExact(fe, b)
	assert.Equal(t, []string{""}, fx.s.Ranges(fx.storeRoute(b)), "one stream, never taken over")
	fx.noTemps()
}

// Issue 41: where each connection is capped (twice the ranges, twice the
// rate), the number doubles while it pays, up to the most allowed, within
// the first large file; a large file after it comes as that many ranges
// from its first chunk, never more at once.
func TestRangesThatPayAreKept(t *testing.T) {
	fx := setup(t)
	a := fx.album.AddFile(enteapitest.FileSpec{Title: "a.mp4", Size: 64 << 20, Seed: 23})
	b := fx.album.AddFile(enteapitest.FileSpec{Title: "b.mp4", Size: 40 << 20, Seed: 24})
	fe, found := fx.foundFetcher(func(n int) time.Duration { return 400 * time.Millisecond / time.Duration(n) })

	fx.fetchExact(fe, a)
	assert.Equal(t, 4, found.Now())
	ra := fx.s.Ranges(fx.storeRoute(a))
	require.NotEmpty(t, ra)
	assert.Equal(t, "", ra[0], "begun as one stream")
	assert.Equal(t, sortedCopy(segments(4*seg, fx.target(a).Size)), sortedCopy(ra[1:]), "ranges from the first window's end")

	segs := segments(0, fx.target(b).Size)
	g := enteapitest.NewGate(t, fx.s, fx.atStore(b), func(g *enteapitest.Gate) {
		g.Release(fx.storeKey(b, segs[0])) // its answer starts the other workers
		for i := 1; i < len(segs); i++ {
			g.Await(min(4, len(segs)-i))       // every worker's range is asked for
			g.Release(fx.storeKey(b, segs[i])) // in order, as the reader takes them
		}
	})
	fx.fetchExact(fe, b)
	assert.Equal(t, sortedCopy(segs), sortedCopy(fx.s.Ranges(fx.storeRoute(b))), "ranges from the first chunk")
	assert.Equal(t, 4, g.Most(), "as many ranges at once as found, never more")
	fx.noTemps()
}

// tailRewrite has the first request for the rest of an object from a
// chunk's edge past the first (one stream after ranges) go out as change
// makes it.
type tailRewrite struct {
	base   http.RoundTripper
	size   int64
	change func(r *http.Request, from int64)
	once   sync.Once
}

func (tr *tailRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	var from, to int64
	if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &from, &to); err == nil && to == tr.size-1 && to+1-from > seg && from > 0 {
		tr.once.Do(func() {
			r = r.Clone(r.Context())
			tr.change(r, from)
		})
	}
	return tr.base.RoundTrip(r)
}

// Issue 41: the one stream a file goes on with after ranges that did not
// pay is checked as any ranged answer is: one of other bytes is never
// used, and one of the whole object says the store ignores Range; either
// way the attempt ends as a cut one would, the next takes the file up from
// its last point, and it is saved byte-exact.
func TestTheOneStreamAfterRangesIsChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *http.Request, from int64)
		next   string // the request after the changed one, from byte from on
	}{
		{"other bytes", func(r *http.Request, from int64) {
			r.Header.Set("Range", fmt.Sprintf("bytes=%d-", from+100))
		}, "a range"},
		{"the whole object", func(r *http.Request, _ int64) { r.Header.Del("Range") }, "one stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := setup(t)
			a := fx.album.AddFile(enteapitest.FileSpec{Title: "a.mp4", Size: 64 << 20, Seed: 25})
			tr := &tailRewrite{base: http.DefaultTransport, size: fx.target(a).Size, change: tc.change}
			fe, _ := fx.foundFetcher(func(int) time.Duration { return 100 * time.Millisecond })
			fe.Client = fx.s.Client(&http.Client{Transport: tr}).WithToken(fx.u.Token())
			fe.Policy.MaxAttempts = 3
			fx.fetchExact(fe, a)
			ra := fx.s.Ranges(fx.storeRoute(a))
			changed := -1
			for i, r := range ra {
				if r == "" && i > 0 || strings.HasSuffix(r, "-") {
					changed = i
					break
				}
			}
			require.Positive(t, changed, "%q", ra)
			require.Greater(t, len(ra), changed+1, "the file was taken up again: %q", ra)
			next := ra[changed+1]
			if tc.next == "one stream" {
				assert.True(t, strings.HasSuffix(next, "-"), "the store ignores Range: one stream from the point, %q", next)
			} else {
				assert.False(t, strings.HasSuffix(next, "-"), "ranges still: %q", next)
			}
			fx.noTemps()
		})
	}
}
