package download_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/rate"
)

// multiFetcher fetches files of more than 8 MiB as 4 ranges at once; its
// retries record nothing and return at once (they run on several
// goroutines).
func (fx *fixture) multiFetcher() *download.Fetcher {
	f := fx.fetcher()
	f.Policy.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	f.Policy.OnRetry = nil
	f.Streams, f.StreamAbove = 4, 8<<20
	return f
}

// atStore matches the requests for f's object at the store, for a Gate.
func (fx *fixture) atStore(f *enteapitest.File) func(key string) bool {
	route := fx.storeRoute(f)
	return func(key string) bool { return key == route || strings.HasPrefix(key, route+" ") }
}

// storeKey is the RequestKey of range r of f's object at the store.
func (fx *fixture) storeKey(f *enteapitest.File, r string) string { return fx.storeRoute(f) + " " + r }

const seg = wire

func closedRange(from, to int64) string { return fmt.Sprintf("bytes=%d-%d", from, to) }

// segments lists the ranges a file of size ciphertext bytes is cut into
// from byte from.
func segments(from, size int64) []string {
	var out []string
	for a := from; a < size; a += seg {
		out = append(out, closedRange(a, min(a+seg, size)-1))
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// Issue 20: a large file comes as ranges cut on the encrypted chunks'
// edges, four in flight at once, and is saved byte-exact.
func TestALargeFileComesAsSeveralRangesAtOnce(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 24 << 20, Seed: 7})
	tg := fx.target(f)
	segs := segments(0, tg.Size)
	g := enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
		g.Release(fx.storeKey(f, segs[0])) // its answer starts the other workers
		for i := 1; i < len(segs); i++ {
			g.Await(min(4, len(segs)-i))       // every worker's range is asked for
			g.Release(fx.storeKey(f, segs[i])) // in order, as the reader takes them
		}
	})
	p, err := fx.multiFetcher().Fetch(context.Background(), tg, fx.dir)
	require.NoError(t, err)
	got := readPartial(t, p)
	assert.True(t, bytes.Equal(f.Plaintext(), got), "content differs")
	assert.False(t, p.HashMismatch)
	assert.Equal(t, sortedCopy(segs), sortedCopy(fx.s.Ranges(fx.storeRoute(f))))
	assert.Equal(t, 4, g.Most(), "four ranges in flight at once, never more")
	// Museum is asked once; the other ranges go to the store's address.
	assert.Equal(t, 1, fx.s.Requests(apiRoute(f)))
	fx.noTemps()
}

// A small file, or one of unknown size, comes in one answer.
func TestSmallFilesComeInOneAnswer(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "small.jpg", Size: 6 << 20, Seed: 1})
	p, err := fx.multiFetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(f.Plaintext(), readPartial(t, p)))
	assert.Equal(t, []string{""}, fx.s.Ranges(fx.storeRoute(f)))
}

// Issue 20: a range cut short is asked again for its missing bytes only,
// on its own: the other ranges and the decrypted chunks are not fetched
// again.
func TestACutRangeResumesOnItsOwn(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 20 << 20, Seed: 3})
	tg := fx.target(f)
	// The first answer passes; the second range's is cut, whichever of the
	// two workers asks first.
	fx.s.Inject(fx.storeRoute(f), enteapitest.Pass(), enteapitest.CutAfter(1000))
	enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
		g.Serve(fx.storeKey(f, closedRange(0, seg-1)))
		g.Serve(fx.storeKey(f, closedRange(seg, 2*seg-1)))
	})
	f2 := fx.multiFetcher()
	f2.Streams = 2
	p, err := f2.Fetch(context.Background(), tg, fx.dir)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(f.Plaintext(), readPartial(t, p)), "content differs")
	ranges := fx.s.Ranges(fx.storeRoute(f))
	want := append(segments(0, tg.Size), closedRange(seg+1000, 2*seg-1))
	assert.Equal(t, sortedCopy(want), sortedCopy(ranges), "one more request, for the cut range's rest")
}

// Issue 20: a store that answers a Range with the whole object is used
// as it is, and asked for whole objects from then on.
func TestAStoreThatRefusesRangeGetsOneStream(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "a.mp4", Size: 20 << 20, Seed: 4})
	g := fx.album.AddFile(enteapitest.FileSpec{Title: "b.mp4", Size: 20 << 20, Seed: 5})
	fx.s.Inject(fx.storeRoute(f), enteapitest.IgnoreRange())
	fe := fx.multiFetcher()
	p, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(f.Plaintext(), readPartial(t, p)))
	assert.Equal(t, []string{closedRange(0, seg-1)}, fx.s.Ranges(fx.storeRoute(f)), "one answer, the whole object")
	p, err = fe.Fetch(context.Background(), fx.target(g), fx.dir)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(g.Plaintext(), readPartial(t, p)))
	assert.Equal(t, []string{""}, fx.s.Ranges(fx.storeRoute(g)), "no Range asked again")
}

// A range from another object (a new ETag meanwhile) is never spliced in:
// the download starts over, and ends byte-exact.
func TestARangeOfAnotherObjectIsNeverSpliced(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 20 << 20, Seed: 8})
	tg := fx.target(f)
	// The object is stored again once its first range was answered.
	enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
		g.Serve(fx.storeKey(f, closedRange(0, seg-1)))
		f.SetETag("v2")
	})
	fe := fx.multiFetcher()
	fe.Streams = 2
	p, err := fe.Fetch(context.Background(), tg, fx.dir)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(f.Plaintext(), readPartial(t, p)), "content differs")
	assert.False(t, p.HashMismatch)
	starts := 0
	for _, r := range fx.s.Ranges(fx.storeRoute(f)) {
		if r == closedRange(0, seg-1) {
			starts++
		}
	}
	assert.Equal(t, 2, starts, "started over from byte 0 once")
}

func readPartial(t *testing.T, p *download.Partial) []byte {
	t.Helper()
	got, err := os.ReadFile(p.Path())
	require.NoError(t, err)
	p.Discard()
	return got
}

// --bwlimit: every byte of a download, in one answer or as several ranges,
// passes through the run's limit.
func TestDownloadsKeepToTheBandwidthLimit(t *testing.T) {
	for _, streams := range []int{1, 4} {
		t.Run(fmt.Sprintf("streams=%d", streams), func(t *testing.T) {
			fx := setup(t)
			f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 20 << 20, Seed: 2})
			tg := fx.target(f)
			clock := &fakeClock{t: time.Unix(0, 0)}
			fe := fx.multiFetcher()
			fe.Streams = streams
			fe.Rate = rate.New(4<<20, clock.now, clock.sleep)
			p, err := fe.Fetch(context.Background(), tg, fx.dir)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(f.Plaintext(), readPartial(t, p)))
			// Every ciphertext byte at 4 MiB/s, from an empty bucket.
			want := time.Duration(float64(tg.Size) / float64(4<<20) * float64(time.Second))
			assert.InDelta(t, float64(want), float64(clock.slept()), float64(10*time.Millisecond))
		})
	}
}

// fakeClock moves only when the limiter sleeps.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	total time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.total += d
	return nil
}

func (c *fakeClock) slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Issue 20: MultiStreamFiles large files at once come as ranges; one more
// in flight meanwhile begins as one stream, so memory stays bounded.
func TestOnlySomeLargeFilesComeAsRangesAtOnce(t *testing.T) {
	fx := setup(t)
	n := download.MultiStreamFiles + 1
	files := make([]*enteapitest.File, n)
	targets := make([]download.Target, n)
	for i := range files {
		files[i] = fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("big-%d.mp4", i), Size: 12 << 20, Seed: byte(i + 1)})
		targets[i] = fx.target(files[i])
	}
	// Every file has asked museum before any answer comes.
	enteapitest.NewGate(t, fx.s, func(key string) bool { return strings.HasPrefix(key, "GET /files/download/") },
		func(g *enteapitest.Gate) { g.Await(n) })
	f := fx.multiFetcher()
	var wg sync.WaitGroup
	got := make([][]byte, n)
	errs := make([]error, n)
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := f.Fetch(context.Background(), targets[i], fx.dir)
			if errs[i] = err; err == nil {
				b, rerr := os.ReadFile(p.Path())
				got[i], errs[i] = b, rerr
				p.Discard()
			}
		}()
	}
	wg.Wait()
	ranged := 0
	for i, file := range files {
		require.NoError(t, errs[i])
		assert.True(t, bytes.Equal(file.Plaintext(), got[i]), "file %d differs", i)
		// The first answer says how the file began: several ranges, or one
		// stream (which may be taken over by ranges later, when a place
		// frees up).
		if r := fx.s.Ranges(fx.storeRoute(file)); r[0] != "" {
			ranged++
		}
	}
	assert.Equal(t, download.MultiStreamFiles, ranged)
}
