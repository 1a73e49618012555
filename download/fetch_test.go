package download_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

const (
	headersTimeout = 20 * time.Second
	idleTimeout    = 60 * time.Second
)

type fixture struct {
	t       *testing.T
	s       *enteapitest.Server
	u       *enteapitest.User
	album   *enteapitest.Album
	timers  *enteapitest.Timers
	client  *apiclient.Client
	sleeps  []time.Duration
	retries int
	retried []error
	dir     string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	u := s.AddUser("a@example.org", "pw", enteapitest.UserOptions{})
	fx := &fixture{t: t, s: s, u: u, album: u.AddAlbum("album"), timers: enteapitest.NewTimers(), dir: t.TempDir()}
	d := apiclient.Deadlines{Headers: headersTimeout, BodyIdle: idleTimeout, NewTimer: fx.timers.New}
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(http.DefaultTransport.(*http.Transport).Clone(), d)}
	fx.client = s.Client(hc).WithToken(u.Token())
	return fx
}

func (fx *fixture) fetcher() *download.Fetcher {
	p := retry.Default()
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		fx.sleeps = append(fx.sleeps, d)
		return ctx.Err()
	}
	p.Rand = func() float64 { return 0.5 }
	p.OnRetry = func(err error, _ int, _ time.Duration) {
		fx.retries++
		fx.retried = append(fx.retried, err)
	}
	return &download.Fetcher{Client: fx.client, Policy: p}
}

func (fx *fixture) target(f *enteapitest.File) download.Target {
	fx.t.Helper()
	e, err := fx.client.CollectionFile(context.Background(), fx.album.ID, f.ID)
	require.NoError(fx.t, err)
	md, err := secretstream.OpenBlob(f.Key(), e.Metadata.DecryptionHeader, e.Metadata.EncryptedData)
	require.NoError(fx.t, err)
	hash := between(string(md), `"hash":"`, `"`)
	require.NotEmpty(fx.t, hash)
	return download.Target{FileID: f.ID, Key: f.Key(), Header: e.File.DecryptionHeader, Size: e.Info.FileSize, Hash: hash}
}

func between(s, a, b string) string {
	i := bytes.Index([]byte(s), []byte(a))
	if i < 0 {
		return ""
	}
	rest := s[i+len(a):]
	j := bytes.Index([]byte(rest), []byte(b))
	return rest[:j]
}

func (fx *fixture) storeRoute(f *enteapitest.File) string {
	return fmt.Sprintf("GET /store/%d/file-%d", fx.u.ID, f.ID)
}

func apiRoute(f *enteapitest.File) string { return fmt.Sprintf("GET /files/download/%d", f.ID) }

// noTemps asserts that nothing but final files is in the folder.
func (fx *fixture) noTemps() {
	fx.t.Helper()
	entries, err := os.ReadDir(fx.dir)
	require.NoError(fx.t, err)
	for _, e := range entries {
		assert.NotContains(fx.t, e.Name(), durable.TempPrefix, "temp file left behind")
	}
}

func (fx *fixture) fetchAndCommit(f *enteapitest.File) ([]byte, *download.Partial) {
	fx.t.Helper()
	p, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	require.NoError(fx.t, err)
	final := filepath.Join(fx.dir, "out")
	mtime := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	require.NoError(fx.t, p.Commit(final, 0o640, mtime))
	got, err := os.ReadFile(final)
	require.NoError(fx.t, err)
	fi, err := os.Stat(final)
	require.NoError(fx.t, err)
	assert.True(fx.t, fi.ModTime().Equal(mtime))
	assert.Equal(fx.t, os.FileMode(0o640), fi.Mode().Perm())
	fx.noTemps()
	return got, p
}

func TestSizesAreSavedByteExact(t *testing.T) {
	for _, size := range []int64{0, 1, 4<<20 - 1, 4 << 20, 4<<20 + 1, 3*(4<<20) + 17} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			fx := setup(t)
			f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: size, Seed: byte(size)})
			got, p := fx.fetchAndCommit(f)
			assert.True(t, bytes.Equal(f.Plaintext(), got), "content differs")
			assert.Equal(t, size, p.Size)
			assert.False(t, p.HashMismatch)
			assert.Equal(t, 1, fx.s.Requests(fx.storeRoute(f)))
		})
	}
}

func TestNotFoundIsOneRequest(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("x")})
	fx.s.Inject(apiRoute(f), enteapitest.Status(404))
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 404, ae.Status)
	assert.Contains(t, err.Error(), fmt.Sprintf("file %d", f.ID))
	assert.Equal(t, 1, fx.s.Requests(apiRoute(f)))
	assert.Empty(t, fx.sleeps)
}

func TestServerErrorUsesEveryAttempt(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("x")})
	fx.s.Inject(apiRoute(f), enteapitest.Repeat(enteapitest.Status(500), 10)...)
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 500, ae.Status)
	assert.Equal(t, retry.Default().MaxAttempts, fx.s.Requests(apiRoute(f)))
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, fx.sleeps)
}

func TestTimeoutAndRateLimitAreRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("x")})
	fx.s.Inject(apiRoute(f), enteapitest.Status(408), enteapitest.RetryAfter(429, "7"))
	got, _ := fx.fetchAndCommit(f)
	assert.Equal(t, []byte("x"), got)
	assert.Equal(t, 3, fx.s.Requests(apiRoute(f)))
	assert.Equal(t, []time.Duration{time.Second, 7 * time.Second}, fx.sleeps, "429 waits the server's Retry-After")
}

func TestUnauthorizedStopsAtOnce(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("x")})
	fx.s.Inject(apiRoute(f), enteapitest.StatusBody(401, `{"error":"invalid token"}`))
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	assert.ErrorIs(t, err, errs.ErrNotLoggedIn)
	assert.Equal(t, 1, fx.s.Requests(apiRoute(f)))
}

func TestConnectionResetIsRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 200 << 10, Seed: 1})
	fx.s.Inject(fx.storeRoute(f), enteapitest.ResetAfter(50<<10))
	got, _ := fx.fetchAndCommit(f)
	assert.True(t, bytes.Equal(f.Plaintext(), got))
	assert.Equal(t, 2, fx.s.Requests(fx.storeRoute(f)))
}

func TestRefusedConnectionIsRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("x")})
	tg := fx.target(f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := apiclient.New("http://"+addr, &http.Client{}, "test")
	require.NoError(t, err)
	fe := fx.fetcher()
	fe.Client = c.WithToken("t")
	_, err = fe.Fetch(context.Background(), tg, fx.dir)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Equal(t, retry.Default().MaxAttempts-1, fx.retries)
	fx.noTemps()
}

func (fx *fixture) fireOnStall(d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	fx.t.Cleanup(cancel)
	go func() {
		for {
			select {
			case <-fx.s.Stalled:
				fx.timers.Fire(d)
			case <-ctx.Done():
				return
			}
		}
	}()
}

func TestStalledBodyIsAbortedAndRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 300 << 10, Seed: 2})
	fx.fireOnStall(idleTimeout)
	fx.s.Inject(fx.storeRoute(f), enteapitest.StallAfter(100<<10))
	got, _ := fx.fetchAndCommit(f)
	assert.True(t, bytes.Equal(f.Plaintext(), got))
	assert.Equal(t, 2, fx.s.Requests(fx.storeRoute(f)))
}

func TestSlowHeadersAreAbortedAndRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("slow")})
	fx.fireOnStall(headersTimeout)
	fx.s.Inject(apiRoute(f), enteapitest.StallHeaders())
	got, _ := fx.fetchAndCommit(f)
	assert.Equal(t, []byte("slow"), got)
	assert.Equal(t, 2, fx.s.Requests(apiRoute(f)))
}

func TestTruncatedBodyIsRetried(t *testing.T) {
	wire := int64(secretstream.ChunkSize + secretstream.Overhead)
	for name, cut := range map[string]int64{"at-chunk-boundary": wire, "mid-chunk": wire + 1000, "in-first-chunk": 10} {
		t.Run(name, func(t *testing.T) {
			fx := setup(t)
			f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 2*secretstream.ChunkSize + 5, Seed: 3})
			fx.s.Inject(fx.storeRoute(f), enteapitest.CutAfter(cut))
			got, _ := fx.fetchAndCommit(f)
			assert.True(t, bytes.Equal(f.Plaintext(), got))
			assert.Equal(t, 2, fx.s.Requests(fx.storeRoute(f)))
			require.Len(t, fx.retried, 1)
			var te *errs.TruncatedStreamError
			assert.ErrorAs(t, fx.retried[0], &te, "a clean cut is a truncated stream")
		})
	}
}

func TestWrongContentLengthIsRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 100 << 10, Seed: 4})
	fx.s.Inject(fx.storeRoute(f), enteapitest.DeclareLength(50<<10), enteapitest.DeclareLength(200<<10))
	got, _ := fx.fetchAndCommit(f)
	assert.True(t, bytes.Equal(f.Plaintext(), got))
	assert.Equal(t, 3, fx.s.Requests(fx.storeRoute(f)))
}

func TestCorruptChunkIsNotRetried(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 5 << 20, Seed: 5})
	fx.s.Inject(fx.storeRoute(f), enteapitest.FlipAt(1000))
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	assert.ErrorIs(t, err, errs.ErrCorrupted)
	assert.Equal(t, 1, fx.s.Requests(fx.storeRoute(f)))
	fx.noTemps()
}

// A damaged short last chunk, at a known size, is corruption (one request),
// not a cut to retry: the size says the whole chunk arrived.
func TestDamagedShortLastChunkAtAKnownSize(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 4<<20 + 500, Seed: 6})
	last := int64(4<<20 + 17) // the second, short chunk starts here
	fx.s.Inject(fx.storeRoute(f), enteapitest.FlipAt(last+100))
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	assert.ErrorIs(t, err, errs.ErrCorrupted)
	var te *errs.TruncatedStreamError
	assert.False(t, errors.As(err, &te), "taken for a cut: %v", err)
	assert.Equal(t, 1, fx.s.Requests(fx.storeRoute(f)), "corruption is never retried")
	fx.noTemps()
}

func TestHashMismatchKeepsTheFile(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Data: []byte("real"),
		Hash: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="})
	got, p := fx.fetchAndCommit(f)
	assert.Equal(t, []byte("real"), got)
	assert.True(t, p.HashMismatch)
	assert.Equal(t, 1, fx.s.Requests(fx.storeRoute(f)))
}

func TestCancelStopsTheDownload(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "f", Size: 300 << 10, Seed: 6})
	tg := fx.target(f)
	ctx, cancel := context.WithCancel(context.Background())
	fx.s.Inject(fx.storeRoute(f), enteapitest.StallAfter(10<<10))
	go func() {
		<-fx.s.Stalled
		cancel()
	}()
	_, err := fx.fetcher().Fetch(ctx, tg, fx.dir)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	fx.noTemps()
}

// The sweep empties the temp folder it is given, whatever the names in
// it, keeps what a later run takes up, and looks nowhere else.
func TestRemoveLeftovers(t *testing.T) {
	root := t.TempDir()
	tmp := filepath.Join(root, "tmp")
	require.NoError(t, os.MkdirAll(filepath.Join(tmp, "unpacked"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "album"), 0o755))
	for _, p := range []string{"tmp/" + durable.TempPrefix + "1", "tmp/other", "tmp/unpacked/x", "tmp/" + durable.TempPrefix + "resumable",
		"album/" + durable.TempPrefix + "2", durable.TempPrefix + "3"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "album"), filepath.Join(tmp, "link")))
	resumable := filepath.Join(tmp, durable.TempPrefix+"resumable")
	n, err := download.RemoveLeftovers(tmp, map[string]bool{resumable: true})
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Len(t, left, 1)
	assert.Equal(t, durable.TempPrefix+"resumable", left[0].Name(), "a download a later run takes up is kept")
	for _, p := range []string{"album/" + durable.TempPrefix + "2", durable.TempPrefix + "3"} {
		_, err = os.Stat(filepath.Join(root, p))
		assert.NoError(t, err, "%s, outside the temp folder, was removed", p)
	}
	n, err = download.RemoveLeftovers(filepath.Join(root, "none"), nil)
	assert.NoError(t, err, "no temp folder yet: nothing to do")
	assert.Zero(t, n)

	// A temp folder that is a link is refused, not followed.
	require.NoError(t, os.Symlink(filepath.Join(root, "album"), filepath.Join(root, "linked")))
	n, err = download.RemoveLeftovers(filepath.Join(root, "linked"), nil)
	assert.Error(t, err)
	assert.Zero(t, n)
	_, err = os.Stat(filepath.Join(root, "album", durable.TempPrefix+"2"))
	assert.NoError(t, err, "swept through a symbolic link")
}
