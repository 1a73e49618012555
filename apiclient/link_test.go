package apiclient_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/publink"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

const linkUA = "quak/test (link)"

// recorder keeps a copy of every request a client sends.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
	base http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Clone(context.Background()))
	r.mu.Unlock()
	return r.base.RoundTrip(req)
}

func (r *recorder) all() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

// linkSetup is a fake with alice's album, its files and a link.
type linkSetup struct {
	s     *enteapitest.Server
	alice *enteapitest.User
	album *enteapitest.Album
	files []*enteapitest.File
	link  *enteapitest.Link
	url   *publink.Link
	rec   *recorder
}

func newLinkSetup(t *testing.T, cfg enteapitest.Config, o enteapitest.LinkOptions, files int) *linkSetup {
	t.Helper()
	s := newServer(t, cfg)
	ls := &linkSetup{s: s, alice: s.AddUser("alice@example.org", "pw", enteapitest.UserOptions{})}
	ls.album = ls.alice.AddAlbum("Summer")
	for i := range files {
		ls.files = append(ls.files, ls.album.AddFile(enteapitest.FileSpec{
			Title: fmt.Sprintf("%d.jpg", i), Data: bytes.Repeat([]byte{byte(i)}, 1000+i)}))
	}
	ls.link = ls.album.ShareLink(o)
	var err error
	ls.url, err = publink.Parse(ls.link.URL())
	require.NoError(t, err)
	ls.rec = &recorder{base: http.DefaultTransport}
	return ls
}

// client is a link client of the setup's link with user agent ua.
func (ls *linkSetup) client(t *testing.T, ua string) *apiclient.LinkClient {
	t.Helper()
	c, err := apiclient.NewLinkClient(ls.s.URL(), &http.Client{Transport: ls.rec}, ua, ls.url.AccessToken)
	require.NoError(t, err)
	return c
}

func TestLinkClientReadsTheAlbum(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{PageSize: 2}, enteapitest.LinkOptions{}, 5)
	c := ls.client(t, linkUA)
	ctx := context.Background()
	info, err := c.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, ls.album.ID, info.Collection.ID)
	assert.True(t, info.Settings.EnableDownload)
	assert.False(t, info.Settings.PasswordEnabled)
	assert.NotEmpty(t, info.DeviceToken)
	name, err := keys.SecretboxOpen(info.Collection.EncryptedName, info.Collection.NameDecryptionNonce, ls.url.Key)
	require.NoError(t, err)
	assert.Equal(t, "Summer", string(name))

	var since int64
	var entries []apiclient.File
	for pages := 1; ; pages++ {
		p, err := c.Diff(ctx, since)
		require.NoError(t, err)
		entries = append(entries, p.Diff...)
		since = apiclient.DiffCursor(since, p.Diff)
		if !p.HasMore {
			assert.Equal(t, 3, pages)
			break
		}
	}
	require.Len(t, entries, len(ls.files))
	for i, e := range entries {
		fkey, err := keys.SecretboxOpen(e.EncryptedKey, e.KeyDecryptionNonce, ls.url.Key)
		require.NoError(t, err)
		o, err := c.DownloadFile(ctx, e.ID)
		require.NoError(t, err)
		r, err := secretstream.NewReader(fkey, e.File.DecryptionHeader, bytes.NewReader(readObject(t, o)), o.Length)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(ls.files[i].Plaintext(), got), "file %d", e.ID)
		th, err := c.DownloadThumbnail(ctx, e.ID)
		require.NoError(t, err)
		_, err = secretstream.OpenBlob(fkey, e.Thumbnail.DecryptionHeader, readObject(t, th))
		require.NoError(t, err)
	}
	rg, err := c.DownloadFileRange(ctx, entries[0].ID, 10, 19)
	require.NoError(t, err)
	assert.Equal(t, 206, rg.Status)
	assert.Len(t, readObject(t, rg), 10)
	from, err := c.DownloadFileFrom(ctx, entries[0].ID, 100)
	require.NoError(t, err)
	assert.Equal(t, 206, from.Status)
	readObject(t, from)
	direct, err := c.DownloadObjectRange(ctx, rg.URL, 0, 9)
	require.NoError(t, err)
	assert.Len(t, readObject(t, direct), 10)
	for _, r := range ls.rec.all() {
		assert.False(t, r.URL.Query().Has("accessTokenJWT"), "no JWT without a password: %s", r.URL.Path)
		assert.Empty(t, r.Header.Get("X-Auth-Access-Token-JWT"), r.URL.Path)
	}
}

// PL.3: the credentials go where museum reads them and nowhere else: the
// access token on every request to museum (in the query of downloads, which
// redirect), never to the object store; no Origin, no forwarding headers,
// one User-Agent throughout.
func TestLinkCredentialsGoToMuseumOnly(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{Password: "pw"}, 1)
	c := ls.client(t, linkUA)
	ctx := context.Background()
	info, err := c.Info(ctx)
	require.NoError(t, err)
	ph, err := info.Settings.PassHash("pw")
	require.NoError(t, err)
	jwt, err := c.VerifyPassword(ctx, ph)
	require.NoError(t, err)
	c = c.WithJWT(jwt).WithDeviceToken(info.DeviceToken)
	_, err = c.Info(ctx)
	require.NoError(t, err)
	_, err = c.Diff(ctx, 0)
	require.NoError(t, err)
	for _, open := range []func(context.Context, int64) (*apiclient.Object, error){c.DownloadFile, c.DownloadThumbnail} {
		o, err := open(ctx, ls.files[0].ID)
		require.NoError(t, err)
		readObject(t, o)
	}
	_, err = c.VerifyPassword(ctx, ph)
	require.NoError(t, err, "again, with a JWT and a device token at hand")

	museum, store, withDevice := 0, 0, 0
	for _, r := range ls.rec.all() {
		h, q := r.Header, r.URL.Query()
		assert.Equal(t, linkUA, h.Get("User-Agent"), r.URL.Path)
		for _, k := range []string{"Origin", "X-Forwarded-For", "X-Real-IP", "Referer", "X-Auth-Token", "Cookie"} {
			assert.Empty(t, h.Get(k), "%s on %s", k, r.URL.Path)
		}
		if strings.HasPrefix(r.URL.Path, "/store/") {
			store++
			assert.Empty(t, r.URL.RawQuery[:strings.Index(r.URL.RawQuery, "X-Amz")], "the store gets only its presigned query")
			for _, k := range []string{"X-Auth-Access-Token", "X-Auth-Access-Token-JWT", "X-Auth-Link-Device-Token"} {
				assert.Empty(t, h.Get(k), "%s sent to the store", k)
			}
			assert.False(t, q.Has("accessToken") || q.Has("accessTokenJWT"), "credentials in the store's query")
			continue
		}
		museum++
		path := r.URL.Path
		isObject := strings.Contains(path, "/files/")
		if isObject {
			assert.Equal(t, ls.url.AccessToken, q.Get("accessToken"), path)
			assert.Equal(t, jwt, q.Get("accessTokenJWT"), path)
			assert.Empty(t, h.Get("X-Auth-Access-Token"), path)
			assert.Empty(t, h.Get("X-Auth-Access-Token-JWT"), path)
		} else {
			assert.Equal(t, ls.url.AccessToken, h.Get("X-Auth-Access-Token"), path)
			assert.Empty(t, r.URL.Query().Get("accessToken"), path)
		}
		if r.Method == "POST" {
			assert.Equal(t, "application/json", h.Get("Content-Type"), path)
		} else {
			assert.Empty(t, h.Get("Content-Type"), path)
		}
		wantJWT := path == "/public-collection/diff"
		assert.Equal(t, wantJWT, h.Get("X-Auth-Access-Token-JWT") != "", "JWT header on %s", path)
		if dt := h.Get("X-Auth-Link-Device-Token"); dt != "" {
			withDevice++
			assert.Equal(t, info.DeviceToken, dt)
			assert.Contains(t, []string{"/public-collection/info", "/public-collection/diff"}, path)
		}
	}
	assert.Equal(t, 7, museum, "info, verify-password, info, diff, download, preview, verify-password")
	assert.Equal(t, 2, store)
	assert.Equal(t, 2, withDevice, "the second info and the diff")
}

// The device token goes back on /info and /diff once the caller has it.
func TestDeviceTokenIsSentOnInfoAndDiff(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{DeviceLimit: 1}, 1)
	ctx := context.Background()
	info, err := ls.client(t, linkUA).Info(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, info.DeviceToken)

	other := ls.client(t, "another agent")
	_, err = other.Info(ctx)
	assert.ErrorIs(t, err, apiclient.ErrLinkDeviceLimit)
	admitted := other.WithDeviceToken(info.DeviceToken)
	again, err := admitted.Info(ctx)
	require.NoError(t, err, "the token admits another user agent")
	assert.Empty(t, again.DeviceToken, "museum mints none while the one sent is valid")
	_, err = admitted.Diff(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, ls.link.Devices())

	for _, r := range ls.rec.all() {
		if r.Header.Get("User-Agent") == "another agent" && r.Header.Get("X-Auth-Link-Device-Token") != "" {
			assert.Equal(t, info.DeviceToken, r.Header.Get("X-Auth-Link-Device-Token"))
		}
	}
}

func TestPasswordLinkFlow(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{Password: "correct horse"}, 1)
	c := ls.client(t, linkUA)
	ctx := context.Background()
	info, err := c.Info(ctx)
	require.NoError(t, err, "/info works before the password")
	require.True(t, info.Settings.PasswordEnabled)
	_, err = c.Diff(ctx, 0)
	assert.ErrorIs(t, err, apiclient.ErrLinkPassword)
	_, err = c.DownloadFile(ctx, ls.files[0].ID)
	assert.ErrorIs(t, err, apiclient.ErrLinkPassword)

	wrong, err := info.Settings.PassHash("wrong")
	require.NoError(t, err)
	_, err = c.VerifyPassword(ctx, wrong)
	assert.ErrorIs(t, err, apiclient.ErrLinkWrongPassword)

	right, err := info.Settings.PassHash("correct horse")
	require.NoError(t, err)
	jwt, err := c.VerifyPassword(ctx, right)
	require.NoError(t, err)
	unlocked := c.WithJWT(jwt)
	_, err = unlocked.Diff(ctx, 0)
	require.NoError(t, err)
	o, err := unlocked.DownloadFile(ctx, ls.files[0].ID)
	require.NoError(t, err)
	readObject(t, o)
	_, err = c.Diff(ctx, 0)
	assert.ErrorIs(t, err, apiclient.ErrLinkPassword, "WithJWT returns a copy")

	ls.link.SetPassword("changed")
	_, err = unlocked.Diff(ctx, 0)
	assert.ErrorIs(t, err, apiclient.ErrLinkPassword, "the password changed: ask again")
}

// PL.6's vector, accepted by museum.
func TestPassHashVector(t *testing.T) {
	nonce, err := base64.StdEncoding.DecodeString("FbV5OsimC8RRqpZHXKnU5w==")
	require.NoError(t, err)
	s := apiclient.LinkSettings{PasswordEnabled: true, Nonce: nonce, OpsLimit: 2, MemLimit: 67108864}
	got, err := s.PassHash("hunter2")
	require.NoError(t, err)
	assert.Equal(t, "LX6/9Pc2LN9tnn9F8smj/FIUk+2Bb8vZE2dy0eWlwZw=", got)
	_, err = apiclient.LinkSettings{Nonce: nonce[:8], OpsLimit: 2, MemLimit: 67108864}.PassHash("hunter2")
	assert.ErrorIs(t, err, keys.ErrBadParams, "a salt of the wrong size")
	_, err = apiclient.LinkSettings{Nonce: nonce, OpsLimit: 2, MemLimit: 1 << 40}.PassHash("hunter2")
	assert.ErrorIs(t, err, keys.ErrBadParams, "memory no server should ask for")
}

// PL.4: each refusal is a *LinkError with its reason, never the account's
// ErrNotLoggedIn, never retried; other answers stay *errs.ApiError.
func TestLinkRefusalsAreTyped(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(ls *linkSetup)
		call   string // "info", "diff", "download" or "verify"
		reason error
		status int
	}{
		{"disabled", func(ls *linkSetup) { ls.link.Disable() }, "info", apiclient.ErrLinkDisabled, 410},
		{"album deleted", func(ls *linkSetup) { ls.album.Delete() }, "diff", apiclient.ErrLinkDisabled, 410},
		{"expired", func(ls *linkSetup) {
			ls.link.SetValidTill(ls.s.ServerTime() + 1)
			ls.s.Advance(time.Second)
		}, "info", apiclient.ErrLinkExpired, 410},
		{"no subscription", func(ls *linkSetup) { ls.s.LapseSubscription(ls.alice) }, "download", apiclient.ErrLinkNoSubscription, 410},
		{"unknown token", func(ls *linkSetup) { ls.url.AccessToken = "ZZZZZZZZZZ" }, "info", apiclient.ErrLinkUnknown, 401},
		{"password", func(ls *linkSetup) { ls.link.SetPassword("pw") }, "diff", apiclient.ErrLinkPassword, 401},
		{"wrong password", func(ls *linkSetup) { ls.link.SetPassword("pw") }, "verify", apiclient.ErrLinkWrongPassword, 401},
		{"device limit", func(ls *linkSetup) {
			ls.link.SetDeviceLimit(1)
			c, err := apiclient.NewLinkClient(ls.s.URL(), &http.Client{}, "first device", ls.url.AccessToken)
			if err != nil {
				panic(err)
			}
			if _, err := c.Info(context.Background()); err != nil {
				panic(err)
			}
		}, "diff", apiclient.ErrLinkDeviceLimit, 403},
		{"older museum's device limit", func(ls *linkSetup) {
			ls.s.Inject("GET /public-collection/info", enteapitest.StatusBody(429, `{"error":"reached device limit"}`))
		}, "info", apiclient.ErrLinkDeviceLimit, 429},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{}, 1)
			c.setup(ls)
			err := linkCall(ls.client(t, linkUA), c.call, ls.files[0].ID)
			var le *apiclient.LinkError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, c.reason)
			assert.Equal(t, c.status, le.Answer.Status)
			assert.NotErrorIs(t, err, errs.ErrNotLoggedIn, "a link's refusal is no account's")
			assert.Equal(t, retry.Permanent, retry.Classify(fmt.Errorf("album: %w", err)))
			assert.False(t, retry.Overloaded(err))
			var ae *errs.ApiError
			assert.False(t, errors.As(err, &ae), "the answer is not unwrapped")
			assert.Contains(t, err.Error(), c.reason.Error())
			assert.Contains(t, err.Error(), fmt.Sprintf("HTTP %d", c.status))
		})
	}
}

func linkCall(c *apiclient.LinkClient, which string, fileID int64) error {
	ctx := context.Background()
	var err error
	switch which {
	case "info":
		_, err = c.Info(ctx)
	case "diff":
		_, err = c.Diff(ctx, 0)
	case "download":
		_, err = c.DownloadFile(ctx, fileID)
	case "verify":
		_, err = c.VerifyPassword(ctx, "d3Jvbmc=")
	}
	return err
}

// Answers that are not refusals of the link keep their *errs.ApiError: a
// rate limit to retry, a file not in the album, a missing object.
func TestOtherLinkAnswersStayApiErrors(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{}, 1)
	c := ls.client(t, linkUA)
	ctx := context.Background()
	ls.s.Inject("GET /public-collection/diff", enteapitest.RateLimited(), enteapitest.Status(503))
	for _, want := range []errs.ApiError{
		{Method: "GET", Path: "/public-collection/diff", Status: 429, Message: "Rate limit breached, try later"},
		{Method: "GET", Path: "/public-collection/diff", Status: 503},
	} {
		_, err := c.Diff(ctx, 0)
		var ae *errs.ApiError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, want, *ae, "no secret of a link without password or device token changes the message")
		assert.Equal(t, retry.Transient, retry.Classify(err))
	}
	_, err := c.DownloadFile(ctx, 999999)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 403, ae.Status, "PL.3: a file not in the album")
	var le *apiclient.LinkError
	assert.False(t, errors.As(err, &le))

	lost := ls.album.AddFile(enteapitest.FileSpec{Title: "lost.jpg", Data: []byte("x"), LostFile: true})
	_, err = c.DownloadFile(ctx, lost.ID)
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.ObjectStore, "the store's 404")
	assert.False(t, errors.As(err, &le))
}

// Refusals are told apart by museum's words only where museum says them:
// an object store's answer is never a refusal of the link, whatever it says.
func TestOnlyMuseumRefusesALink(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{}, 1)
	c := ls.client(t, linkUA)
	f := ls.files[0]
	ls.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", ls.alice.ID, f.ID),
		enteapitest.StatusBody(403, `{"code":"LINK_DEVICE_LIMIT_EXCEEDED"}`),
		enteapitest.StatusBody(410, `{"error":"disabled token"}`))
	for range 2 {
		_, err := c.DownloadFile(context.Background(), f.ID)
		var ae *errs.ApiError
		require.ErrorAs(t, err, &ae)
		assert.True(t, ae.ObjectStore)
	}
}

// museum's words beyond those PL.4 lists: a 401 {} away from
// verify-password, a 410 that says something new.
func TestUnlistedRefusalsFallBackByStatus(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{}, 1)
	c := ls.client(t, linkUA)
	ls.s.Inject("GET /public-collection/info", enteapitest.StatusBody(401, `{}`), enteapitest.StatusBody(410, `{"error":"gone fishing"}`),
		enteapitest.StatusBody(401, `{"error":"token expired"}`), enteapitest.StatusBody(403, `{}`))
	for _, want := range []error{apiclient.ErrLinkUnknown, apiclient.ErrLinkDisabled, apiclient.ErrLinkUnknown} {
		_, err := c.Info(context.Background())
		assert.ErrorIs(t, err, want)
	}
	_, err := c.Info(context.Background())
	var le *apiclient.LinkError
	assert.False(t, errors.As(err, &le), "a 403 without the device code is no refusal of the link")
}

func TestVerifyPasswordWithoutATokenIsAnError(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{Password: "pw"}, 0)
	ls.s.Inject("POST /public-collection/verify-password", enteapitest.StatusBody(200, `{}`))
	_, err := ls.client(t, linkUA).VerifyPassword(context.Background(), "eA==")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no token")
}

func TestLinkInfoWithoutSettingsIsAnError(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{}, 0)
	ls.s.Inject("GET /public-collection/info", enteapitest.StatusBody(200, `{"collection":{"id":7,"publicURLs":[]}}`))
	_, err := ls.client(t, linkUA).Info(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "describes no link")
}

func TestNewLinkClientNeedsAgentAndToken(t *testing.T) {
	_, err := apiclient.NewLinkClient("http://127.0.0.1:1", nil, "", "TOKEN")
	assert.Error(t, err)
	_, err = apiclient.NewLinkClient("http://127.0.0.1:1", nil, "ua", "")
	assert.Error(t, err)
	_, err = apiclient.NewLinkClient("not a url", &http.Client{}, "ua", "TOKEN")
	assert.Error(t, err)
}
