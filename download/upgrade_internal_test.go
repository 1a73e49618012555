package download

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/retry"
)

// upgradeFixture is one 40 MiB file on the fake server and a fetcher whose
// only multi-stream place the test holds.
type upgradeFixture struct {
	s     *enteapitest.Server
	file  *enteapitest.File
	t     Target
	f     *Fetcher
	route string
}

// configure, if given, sets the fetcher's fields before its first use.
func newUpgradeFixture(t *testing.T, configure ...func(*upgradeFixture)) *upgradeFixture {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	return newUpgradeFixtureOn(t, s, nil, configure...)
}

// newUpgradeFixtureOn is newUpgradeFixture on s, through hc (nil: the
// default client).
func newUpgradeFixtureOn(t *testing.T, s *enteapitest.Server, hc *http.Client, configure ...func(*upgradeFixture)) *upgradeFixture {
	t.Helper()
	u := s.AddUser("a@example.org", "pw", enteapitest.UserOptions{})
	al := u.AddAlbum("album")
	file := al.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 40 << 20, Seed: 9})
	c := s.Client(hc).WithToken(u.Token())
	e, err := c.CollectionFile(context.Background(), al.ID, file.ID)
	require.NoError(t, err)
	p := retry.Default()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	f := &Fetcher{Client: c, Policy: p, Streams: 4, StreamAbove: 8 << 20, MultiFiles: 1}
	fx := &upgradeFixture{s: s, file: file, f: f, route: fmt.Sprintf("GET /store/%d/file-%d", u.ID, file.ID),
		t: Target{FileID: file.ID, Key: file.Key(), Header: e.File.DecryptionHeader, Size: e.Info.FileSize}}
	for _, c := range configure {
		c(fx)
	}
	require.True(t, f.source().places.ticket(), "the test holds a place")
	return fx
}

// oneAttempt gives every request one attempt.
func oneAttempt(fx *upgradeFixture) { fx.f.Policy.MaxAttempts = 1 }

// fetch fetches the file, giving the place back once the first bytes are
// written, and returns what it saved.
func (fx *upgradeFixture) fetch(t *testing.T) []byte {
	t.Helper()
	return fx.fetchFreeingAt(t, 0)
}

// fetchFreeingAt fetches the file, giving the place back once more than at
// plaintext bytes were written (a retried attempt's counted again).
func (fx *upgradeFixture) fetchFreeingAt(t *testing.T, at int64) []byte {
	t.Helper()
	var once sync.Once
	var seen atomic.Int64
	fx.f.OnBytes = func(n int64) {
		if seen.Add(n) > at {
			once.Do(fx.f.source().places.unticket)
		}
	}
	p, err := fx.f.Fetch(context.Background(), fx.t, t.TempDir())
	require.NoError(t, err)
	defer p.Discard()
	got, err := os.ReadFile(p.Path())
	require.NoError(t, err)
	return got
}

// Issue 20: a large file begun as one stream, because every multi-stream
// place was taken, goes on as several ranges from the next chunk's edge
// once a place frees up, and is saved byte-exact.
func TestALargeFileBegunAsOneStreamTakesAFreedPlace(t *testing.T) {
	fx := newUpgradeFixture(t)
	got := fx.fetch(t)
	assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
	r := fx.s.Ranges(fx.route)
	require.NotEmpty(t, r)
	assert.Equal(t, "", r[0], "begun as one stream")
	require.Greater(t, len(r), 2, "taken over by ranges")
	wire := int64(secretstream.ChunkSize + secretstream.Overhead)
	var from int64
	_, err := fmt.Sscanf(r[1], "bytes=%d-", &from)
	require.NoError(t, err)
	assert.Zero(t, from%wire, "the ranges begin on a chunk's edge")
	assert.Positive(t, from)
	for _, rg := range r[1:] {
		assert.True(t, strings.HasPrefix(rg, "bytes="), rg)
	}
	assert.Empty(t, fx.f.source().places.multi, "the place is given back")
}

// A take-over that fails (the range request is refused) keeps the one
// stream: the file is still saved, and the place is given back.
func TestAFailedTakeOverKeepsTheStream(t *testing.T) {
	fx := newUpgradeFixture(t, oneAttempt)
	fx.s.Inject(fx.route, enteapitest.Pass(), enteapitest.Status(500))
	got := fx.fetch(t)
	assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
	assert.Equal(t, 2, fx.s.Requests(fx.route), "the stream, and one refused range; then no other try")
	assert.Empty(t, fx.f.source().places.multi, "the place is given back")
}

// A store that answers the take-over's range with the whole object does
// not honour Range: the file keeps its stream, and the run asks for whole
// objects from then on.
func TestATakeOverAnsweredWholeKeepsTheStream(t *testing.T) {
	fx := newUpgradeFixture(t)
	fx.s.Inject(fx.route, enteapitest.Pass(), enteapitest.IgnoreRange())
	got := fx.fetch(t)
	assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
	assert.Equal(t, 2, fx.s.Requests(fx.route))
	assert.True(t, fx.f.source().noRange.Load(), "remembered")
	assert.Empty(t, fx.f.source().places.multi, "the place is given back")
}

// h2Store sends requests for the fake object store through an HTTP/2 (TLS)
// reverse proxy, as a store or CDN that speaks h2 answers: its bodies give
// their last bytes with no error and io.EOF only on the next read.
type h2Store struct {
	store, proxy *url.URL
	tls          http.RoundTripper
}

func (h h2Store) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == h.store.Host {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = h.proxy.Scheme, h.proxy.Host
		r.Host = ""
		return h.tls.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A large file that stays one stream to its end, because no multi-stream
// place frees up, ends: over HTTP/2 the end of file comes on a read after
// the last bytes, and that read must reach the body (it was cut to nothing,
// and the download spun forever).
func TestALargeFileLeftAsOneStreamEndsOverHTTP2(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	storeURL, err := url.Parse(s.Store.URL)
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(storeURL))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	proxyURL, err := url.Parse(ts.URL)
	require.NoError(t, err)
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = true
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(h2Store{store: storeURL, proxy: proxyURL, tls: tr}, apiclient.DefaultDeadlines())}
	fx := newUpgradeFixtureOn(t, s, hc) // the test holds the only place all along
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		p   *Partial
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := fx.f.Fetch(ctx, fx.t, t.TempDir())
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		defer r.p.Discard()
		got, err := os.ReadFile(r.p.Path())
		require.NoError(t, err)
		assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
		assert.Equal(t, []string{""}, s.Ranges(fx.route), "one stream to the end")
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("the download never ended")
	}
}

// A download cut and resumed from its checkpoint as one stream (the place
// still taken) is taken over by ranges from a chunk's edge after the
// checkpoint, and ends byte-exact.
func TestAResumedStreamIsTakenOverToo(t *testing.T) {
	fx := newUpgradeFixture(t)
	fx.s.Inject(fx.route, enteapitest.CutAfter(10<<20))
	got := fx.fetchFreeingAt(t, 9<<20)
	assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
	assert.Empty(t, fx.f.source().places.multi, "the place is given back")
	r := fx.s.Ranges(fx.route)
	require.Greater(t, len(r), 3)
	assert.Equal(t, fmt.Sprintf("bytes=%d-", 2*WireChunk), r[1], "resumed from the checkpoint as one stream")
	assert.True(t, strings.HasPrefix(r[2], fmt.Sprintf("bytes=%d-", 3*WireChunk)), "taken over at the next edge: %q", r[2])
}

// A place that frees up when no more than StreamAbove bytes are left is
// not taken: the file ends as the one stream it began as.
func TestLittleLeftIsNotTakenOver(t *testing.T) {
	fx := newUpgradeFixture(t, func(fx *upgradeFixture) {
		fx.f.StreamAbove = fx.t.Size - WireChunk // what is left after the first chunk
	})
	got := fx.fetch(t)
	assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
	assert.Equal(t, []string{""}, fx.s.Ranges(fx.route))
	assert.Len(t, fx.f.source().places.multi, 0, "the place stays free")
}

// --streams 2 is two ranges, not one stream; a file of exactly
// StreamAbove ciphertext bytes comes as one answer, one byte more as
// ranges.
func TestStreamsAndSizeBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		streams int
		above   func(size int64) int64
		ranged  bool
	}{
		{"two streams", 2, func(int64) int64 { return 8 << 20 }, true},
		{"exactly the threshold", 4, func(size int64) int64 { return size }, false},
		{"a byte over it", 4, func(size int64) int64 { return size - 1 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The test's hold on one place is given back with the first
			// bytes, as ever; a second place is free from the start.
			fx := newUpgradeFixture(t, func(fx *upgradeFixture) {
				fx.f.MultiFiles, fx.f.Streams, fx.f.StreamAbove = 2, tc.streams, tc.above(fx.t.Size)
			})
			got := fx.fetch(t)
			assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
			r := fx.s.Ranges(fx.route)
			assert.Equal(t, tc.ranged, r[0] != "", "%q", r)
		})
	}
}

// A store that honours a file's first range but answers later ones with
// the whole object: the ranges stop at once, the attempt starts over as
// one stream, and the file is saved, in a bounded number of requests.
func TestRangesAnsweredWholeMidFileStopAtOnce(t *testing.T) {
	fx := newUpgradeFixture(t)
	fx.f.source().places.unticket() // the place is free from the start
	fx.s.Inject(fx.route, append([]enteapitest.Fault{enteapitest.Pass()}, enteapitest.Repeat(enteapitest.IgnoreRange(), 1000)...)...)
	p, err := fx.f.Fetch(context.Background(), fx.t, t.TempDir())
	require.NoError(t, err)
	defer p.Discard()
	got, err := os.ReadFile(p.Path())
	require.NoError(t, err)
	assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "content differs")
	assert.True(t, fx.f.source().noRange.Load(), "remembered")
	assert.Empty(t, fx.f.source().places.multi, "the place is given back")
	// The first range, at most one answer per other range in flight, and
	// the whole object.
	assert.LessOrEqual(t, fx.s.Requests(fx.route), 1+fx.f.Streams+1)
}
