package apiclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
)

func newServer(t *testing.T, cfg enteapitest.Config) *enteapitest.Server {
	t.Helper()
	s := enteapitest.New(cfg)
	t.Cleanup(s.Close)
	return s
}

func login(t *testing.T, s *enteapitest.Server) (*apiclient.Client, *enteapitest.User) {
	t.Helper()
	u := s.AddUser("alice@example.org", "correct horse", enteapitest.UserOptions{})
	return s.Client(nil).WithToken(u.Token()), u
}

func TestDiffPagesAcrossManyPagesWithoutSplittingATimestamp(t *testing.T) {
	s := newServer(t, enteapitest.Config{PageSize: 4})
	c, u := login(t, s)
	a := u.AddAlbum("Holidays")
	want := map[int64]bool{}
	for i := 0; i < 9; i++ {
		want[a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("a%d.jpg", i), Data: []byte{byte(i)}}).ID] = true
	}
	s.Freeze() // ten files share one updationTime: one page must hold them all
	for i := 0; i < 10; i++ {
		want[a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("b%d.jpg", i), Data: []byte{byte(i)}}).ID] = true
	}
	s.Unfreeze()
	for i := 0; i < 6; i++ {
		want[a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("c%d.jpg", i), Data: []byte{byte(i)}}).ID] = true
	}

	got := map[int64]int{}
	var since int64
	pages := 0
	for {
		p, err := c.Diff(context.Background(), a.ID, since)
		require.NoError(t, err)
		pages++
		for _, f := range p.Diff {
			got[f.ID]++
			assert.Zero(t, f.File.Size, "museum always sends size 0 in diffs")
			require.NotNil(t, f.Info)
			assert.Positive(t, f.Info.FileSize)
		}
		since = apiclient.DiffCursor(since, p.Diff)
		if !p.HasMore {
			break
		}
	}
	assert.Len(t, got, len(want))
	for id, n := range got {
		assert.True(t, want[id], "unexpected file %d", id)
		assert.Equal(t, 1, n, "file %d seen %d times", id, n)
	}
	// Pages of 4, cut as museum cuts them: 4, 4, then 1 (the frozen ten
	// would split), the frozen ten alone, 4, 2 → 6 pages.
	assert.Equal(t, 6, pages)
	assert.Equal(t, pages, s.Requests("GET /collections/v2/diff"))

	p, err := c.Diff(context.Background(), a.ID, since)
	require.NoError(t, err)
	assert.Empty(t, p.Diff)
	assert.False(t, p.HasMore)
}

func TestCollectionsCursorIsTheMaximum(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	a := u.AddAlbum("one")
	u.AddAlbum("two")
	u.AddAlbum("three")
	cs, err := c.Collections(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, cs, 3)
	cursor := apiclient.CollectionsCursor(0, cs)
	assert.NotEqual(t, cs[len(cs)-1].UpdationTime, cursor, "the list is unordered; the last is not the newest")

	cs, err = c.Collections(context.Background(), cursor)
	require.NoError(t, err)
	assert.Empty(t, cs)
	a.Rename("uno")
	cs, err = c.Collections(context.Background(), cursor)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, a.ID, cs[0].ID)
}

func TestErrorBodyShapes(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	route := "GET /collections/v2"
	s.Inject(route,
		enteapitest.StatusBody(404, `{"code":"NOT_FOUND","message":"no such\nthing"}`),
		enteapitest.StatusBody(401, `{"error":"invalid token"}`),
		enteapitest.Status(500),
		enteapitest.StatusBody(502, "<html><body>Bad   Gateway</body></html>"),
		enteapitest.RetryAfter(429, "7"),
	)
	want := []errs.ApiError{
		{Method: "GET", Path: "/collections/v2", Status: 404, Code: "NOT_FOUND", Message: "no such thing"},
		{Method: "GET", Path: "/collections/v2", Status: 401, Message: "invalid token"},
		{Method: "GET", Path: "/collections/v2", Status: 500},
		{Method: "GET", Path: "/collections/v2", Status: 502, Message: "<html><body>Bad Gateway</body></html>"},
		{Method: "GET", Path: "/collections/v2", Status: 429, Message: "Rate limit breached, try later", RetryAfter: "7"},
	}
	for _, w := range want {
		_, err := c.Collections(context.Background(), 0)
		var ae *errs.ApiError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, w, *ae)
	}
	_, err := c.Collections(context.Background(), 0)
	assert.NoError(t, err, "faults used up: requests pass again")
}

func TestExpiredTokenIsNotLoggedIn(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	_, _ = login(t, s)
	c := s.Client(nil).WithToken("bm90LWEtdG9rZW4=")
	_, err := c.SessionValidity(context.Background())
	assert.ErrorIs(t, err, errs.ErrNotLoggedIn)
}

func readObject(t *testing.T, o *apiclient.Object) []byte {
	t.Helper()
	defer o.Body.Close()
	b, err := io.ReadAll(o.Body)
	require.NoError(t, err)
	return b
}

func TestDownloadFollowsTheRedirectWithoutTheToken(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	data := bytes.Repeat([]byte("photo"), 1000)
	f := u.AddAlbum("a").AddFile(enteapitest.FileSpec{Title: "p.jpg", Data: data})

	o, err := c.DownloadFile(context.Background(), f.ID)
	require.NoError(t, err)
	assert.Equal(t, secretstream.CiphertextSize(int64(len(data))), o.Length)
	r, err := secretstream.NewReader(f.Key(), fileHeader(t, c, f), bytes.NewReader(readObject(t, o)), o.Length)
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))

	th, err := c.DownloadThumbnail(context.Background(), f.ID)
	require.NoError(t, err)
	readObject(t, th)

	assert.Equal(t, 1, s.Requests(fmt.Sprintf("GET /files/download/%d", f.ID)))
	assert.Equal(t, 1, s.Requests(fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID)))
	assert.Zero(t, s.Leaks(), "the object store saw the token")
	assert.Zero(t, s.QueryTokens(), "the token travels in a header, never in a URL")
}

func fileHeader(t *testing.T, c *apiclient.Client, f *enteapitest.File) []byte {
	t.Helper()
	cs, err := c.Collections(context.Background(), 0)
	require.NoError(t, err)
	for _, col := range cs {
		fe, err := c.CollectionFile(context.Background(), col.ID, f.ID)
		if err == nil {
			return fe.File.DecryptionHeader
		}
	}
	t.Fatal("file in no collection")
	return nil
}

func TestObjectStoreErrorsAreApiErrors(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	f := u.AddAlbum("a").AddFile(enteapitest.FileSpec{Title: "p.jpg", Data: []byte("x"), LostThumbnail: true})
	_, err := c.DownloadThumbnail(context.Background(), f.ID)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 404, ae.Status)
	assert.Equal(t, "NoSuchKey", ae.Code)
	assert.True(t, ae.ObjectStore, "a 404 after the redirect comes from the object store")
	assert.NotContains(t, err.Error(), "Signature")

	_, err = c.DownloadFile(context.Background(), 999999)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "/files/download/999999", ae.Path)
	assert.False(t, ae.ObjectStore, "museum's own 404 comes before any redirect")
	assert.Equal(t, "fake-404", ae.RequestID, "the X-Request-Id is kept for reports")
	assert.Contains(t, err.Error(), "request id fake-404")
}

func TestNetworkErrorsNeverShowTheToken(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	_, u := login(t, s)
	tok := u.Token()
	c := s.Client(nil).WithToken(tok)
	s.Close() // every request now fails to connect
	_, err := c.DownloadFile(context.Background(), 1)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
	assert.NotContains(t, err.Error(), "token=")
	_, err = c.Collections(context.Background(), 0)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
}

// An error page that echoes the token does not carry it into the error.
func TestErrorPagesNeverShowTheToken(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	f := u.AddAlbum("a").AddFile(enteapitest.FileSpec{Title: "p.jpg", Data: []byte("x")})
	tok := u.Token()
	s.Inject(fmt.Sprintf("GET /files/download/%d", f.ID), enteapitest.StatusBody(502, `{"error":"upstream failed for token `+tok+`"}`))
	_, err := c.WithToken(tok).DownloadFile(context.Background(), f.ID)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok)
	assert.Contains(t, err.Error(), "[token]")
}

func TestB64DecodesLeniently(t *testing.T) {
	var v struct {
		A, B, C, D apiclient.B64
	}
	require.NoError(t, jsonUnmarshal(`{"A":"+/8=","B":"+/8","C":"-_8","D":"-"}`, &v))
	assert.Equal(t, apiclient.B64{0xfb, 0xff}, v.A)
	assert.Equal(t, apiclient.B64{0xfb, 0xff}, v.B)
	assert.Equal(t, apiclient.B64{0xfb, 0xff}, v.C)
	assert.Nil(t, v.D, "museum's scrubbed '-' reads as empty")
	out, err := jsonMarshal(apiclient.B64{0xfb, 0xff})
	require.NoError(t, err)
	assert.Equal(t, `"+/8="`, out)
}

// deadlineClient is a client whose deadlines run on fake timers.
func deadlineClient(s *enteapitest.Server, timers *enteapitest.Timers, token string) *apiclient.Client {
	d := apiclient.Deadlines{Headers: 20 * time.Second, BodyIdle: 60 * time.Second, NewTimer: timers.New}
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(http.DefaultTransport.(*http.Transport).Clone(), d)}
	return s.Client(hc).WithToken(token)
}

// fireOnStall fires the timers of duration d each time the server stalls.
func fireOnStall(t *testing.T, s *enteapitest.Server, timers *enteapitest.Timers, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			select {
			case <-s.Stalled:
				timers.Fire(d)
			case <-ctx.Done():
				return
			}
		}
	}()
}

func TestSlowHeadersHitTheRequestDeadline(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	_, u := login(t, s)
	timers := enteapitest.NewTimers()
	c := deadlineClient(s, timers, u.Token())
	fireOnStall(t, s, timers, 20*time.Second)
	s.Inject("GET /collections/v2", enteapitest.StallHeaders())
	_, err := c.Collections(context.Background(), 0)
	var te *errs.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "response headers", te.Phase)
	_, err = c.Collections(context.Background(), 0)
	assert.NoError(t, err)
}

func TestStalledBodyHitsTheIdleDeadline(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	_, u := login(t, s)
	f := u.AddAlbum("a").AddFile(enteapitest.FileSpec{Title: "v.mp4", Size: 300 << 10, Seed: 3})
	timers := enteapitest.NewTimers()
	c := deadlineClient(s, timers, u.Token())
	fireOnStall(t, s, timers, 60*time.Second)
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID), enteapitest.StallAfter(100<<10))
	o, err := c.DownloadFile(context.Background(), f.ID)
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, o.Body)
	var te *errs.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "response body", te.Phase)
	// The fake timer may fire while flushed bytes are still in flight, so
	// only the upper bound is the server's behaviour.
	assert.LessOrEqual(t, n, int64(100<<10))
	assert.NoError(t, o.Body.Close())
}

// blockingTransport ignores cancellation entirely: its round trips and
// bodies block until the test ends.
type blockingTransport struct {
	release chan struct{}
	body    bool
}

func (b *blockingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	if !b.body {
		<-b.release
		return nil, errors.New("released")
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: blockingBody{b.release}}, nil
}

type blockingBody struct{ release chan struct{} }

func (b blockingBody) Read([]byte) (int, error) { <-b.release; return 0, io.EOF }
func (b blockingBody) Close() error             { return nil }

func TestDeadlinesHoldWhenTheTransportIgnoresCancellation(t *testing.T) {
	for _, body := range []bool{false, true} {
		t.Run(fmt.Sprintf("body=%v", body), func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			timers := enteapitest.NewTimers()
			d := apiclient.Deadlines{Headers: time.Second, BodyIdle: 2 * time.Second, NewTimer: timers.New}
			rt := apiclient.NewDeadlineTransport(&blockingTransport{release: release, body: body}, d)
			req, err := http.NewRequest("GET", "http://example.invalid/x", nil)
			require.NoError(t, err)
			var te *errs.TimeoutError
			if !body {
				timers.Fire(time.Second)
				resp, err := rt.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				require.ErrorAs(t, err, &te)
				assert.Equal(t, "response headers", te.Phase)
				return
			}
			resp, err := rt.RoundTrip(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			timers.Fire(2 * time.Second)
			_, err = resp.Body.Read(make([]byte, 10))
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "response body", te.Phase)
			_, again := resp.Body.Read(make([]byte, 10))
			assert.Equal(t, err, again, "sticky")
		})
	}
}

func TestUserAgentAndPackageHeaders(t *testing.T) {
	var got http.Header
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.Header.Clone()
		return http.DefaultTransport.RoundTrip(r)
	})}
	c2, err := apiclient.New(c.Endpoint(), hc, "1.2.3")
	require.NoError(t, err)
	_, _ = c2.Collections(context.Background(), 0)
	assert.Equal(t, apiclient.ClientPackage, got.Get("X-Client-Package"))
	assert.Equal(t, "1.2.3", got.Get("X-Client-Version"))
	assert.True(t, strings.HasPrefix(got.Get("User-Agent"), "quak/"))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewRejectsBadEndpoints(t *testing.T) {
	for _, bad := range []string{"", "ftp://x", "api.ente.com", "http://"} {
		_, err := apiclient.New(bad, &http.Client{}, "v")
		assert.Error(t, err, bad)
	}
}

// scriptedBody fills each read with fill, telling filled and then waiting
// for proceed (nil: at once) before it returns.
type scriptedBody struct {
	fill            byte
	filled, proceed chan struct{}
}

func (b *scriptedBody) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = b.fill
	}
	if b.filled != nil {
		close(b.filled)
		b.filled = nil
	}
	if b.proceed != nil {
		<-b.proceed
	}
	return len(p), nil
}

func (b *scriptedBody) Close() error { return nil }

// A read left behind by the idle deadline still writes into its buffer
// when it finally returns: that buffer is never handed to another body,
// whose bytes stay its own.
func TestAStuckReadNeverWritesIntoAnotherBodysBuffer(t *testing.T) {
	release, entered, wrote := make(chan struct{}), make(chan struct{}), make(chan struct{})
	stuck := &stuckBody{entered: entered, release: release, wrote: wrote}
	proceed := make(chan struct{})
	good := &scriptedBody{fill: 'G', filled: make(chan struct{}), proceed: proceed}
	filled := good.filled
	bodies := []io.ReadCloser{stuck, good}
	timers := enteapitest.NewTimers()
	rt := apiclient.NewDeadlineTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		b := bodies[0]
		bodies = bodies[1:]
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: b}, nil
	}), apiclient.Deadlines{Headers: time.Second, BodyIdle: 2 * time.Second, NewTimer: timers.New})
	get := func() *http.Response {
		req, err := http.NewRequest("GET", "http://example.invalid/x", nil)
		require.NoError(t, err)
		resp, err := rt.RoundTrip(req)
		require.NoError(t, err)
		return resp
	}
	first := get()
	timers.Fire(2 * time.Second)
	_, err := first.Body.Read(make([]byte, 64<<10))
	var te *errs.TimeoutError
	require.ErrorAs(t, err, &te)
	waitFor(t, entered)
	first.Body.Close()

	second := get() //nolint:bodyclose // closed just below
	defer second.Body.Close()
	got := make([]byte, 64<<10)
	read := make(chan int, 1)
	go func() {
		n, _ := second.Body.Read(got)
		read <- n
	}()
	waitFor(t, filled)
	close(release) // the stuck read writes into its buffer now
	waitFor(t, wrote)
	close(proceed)
	var n int
	select {
	case n = <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the second read never returned")
	}
	require.Equal(t, len(got), n)
	assert.Equal(t, bytes.Repeat([]byte{'G'}, n), got[:n], "another body's stuck read wrote into this one's bytes")
}

// stuckBody's read waits for release, then writes X over its buffer.
type stuckBody struct{ entered, release, wrote chan struct{} }

func (b *stuckBody) Read(p []byte) (int, error) {
	close(b.entered)
	<-b.release
	for i := range p {
		p[i] = 'X'
	}
	close(b.wrote)
	return len(p), nil
}

func (b *stuckBody) Close() error { return nil }

func waitFor(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
}
