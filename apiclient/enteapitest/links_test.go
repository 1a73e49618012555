package enteapitest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
)

// answer is what the fake said to one raw request.
type answer struct {
	status int
	body   string
	header http.Header
}

// req is one raw request to the fake: headers to set, a JSON body.
type req struct {
	method, path string
	hdr          map[string]string
	body         any
}

// call sends r without following redirects.
func call(t *testing.T, s *enteapitest.Server, r req) answer {
	t.Helper()
	if r.method == "" {
		r.method = "GET"
	}
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		require.NoError(t, err)
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequest(r.method, s.URL()+r.path, body)
	require.NoError(t, err)
	hr.Header.Set("User-Agent", "ua-a")
	for k, v := range r.hdr {
		hr.Header.Set(k, v)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, strings.TrimSpace(string(b)), resp.Header}
}

// as is the headers of a link request with token from user agent ua.
func as(token, ua string, more ...string) map[string]string {
	h := map[string]string{"X-Auth-Access-Token": token, "User-Agent": ua}
	for i := 0; i+1 < len(more); i += 2 {
		h[more[i]] = more[i+1]
	}
	return h
}

// linkFixture is an album of alice's with two files and a link.
type linkFixture struct {
	s      *enteapitest.Server
	alice  *enteapitest.User
	album  *enteapitest.Album
	files  []*enteapitest.File
	link   *enteapitest.Link
	info   string // the info route
	diff   string // the diff route at sinceTime 0
	dlPath string // the download route of the first file
}

func newLinkFixture(t *testing.T, o enteapitest.LinkOptions) *linkFixture {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	f := &linkFixture{s: s, alice: s.AddUser("alice@example.org", "a", enteapitest.UserOptions{})}
	f.album = f.alice.AddAlbum("Holidays")
	for i := range 2 {
		f.files = append(f.files, f.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Data: []byte{byte(i)}}))
	}
	f.link = f.album.ShareLink(o)
	f.info, f.diff = "/public-collection/info", "/public-collection/diff?sinceTime=0"
	f.dlPath = fmt.Sprintf("/public-collection/files/download/%d", f.files[0].ID)
	return f
}

func TestShareLinkURLCarriesTokenAndKey(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{})
	l, err := publink.Parse(f.link.URL())
	require.NoError(t, err)
	assert.Equal(t, f.link.Token(), l.AccessToken)
	assert.Regexp(t, regexp.MustCompile(`^[2-9A-Z]{10}$`), l.AccessToken, "PL.1")
	assert.Equal(t, "albums.ente.com", l.Host)
	assert.Equal(t, http.StatusOK, call(t, f.s, req{path: f.info, hdr: as(l.AccessToken, "ua-a")}).status)
}

func TestOwnerRoutesMakeChangeAndDeleteALink(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	alice := s.AddUser("alice@example.org", "a", enteapitest.UserOptions{})
	bob := s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	a := alice.AddAlbum("one")
	auth := map[string]string{"X-Auth-Token": alice.Token()}
	post := func(body any) answer {
		return call(t, s, req{method: "POST", path: "/collections/share-url", hdr: auth, body: body})
	}
	put := func(body map[string]any) answer {
		body["collectionID"] = a.ID
		return call(t, s, req{method: "PUT", path: "/collections/share-url", hdr: auth, body: body})
	}
	assert.Equal(t, 404, put(map[string]any{"deviceLimit": 2}).status, "no link yet")

	born := albumTime(t, s, alice, a.ID)
	created := post(map[string]any{"collectionID": a.ID, "deviceLimit": 7, "enableCollect": true, "enableJoin": false})
	require.Equal(t, 200, created.status)
	var res struct {
		Result map[string]any `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(created.body), &res))
	assert.Equal(t, true, res.Result["enableDownload"])
	assert.Equal(t, false, res.Result["passwordEnabled"])
	assert.Equal(t, true, res.Result["enableCollect"])
	assert.Equal(t, false, res.Result["enableJoin"])
	assert.EqualValues(t, 7, res.Result["deviceLimit"])
	url := res.Result["url"].(string)
	assert.Regexp(t, `^https://albums\.ente\.com/\?t=[2-9A-Z]{10}$`, url, "museum's url has no fragment")
	token := strings.TrimPrefix(url, "https://albums.ente.com/?t=")
	assert.Greater(t, albumTime(t, s, alice, a.ID), born, "a new link bumps the album")

	again := post(map[string]any{"collectionID": a.ID, "deviceLimit": 9})
	assert.Equal(t, created.body, again.body, "an active link comes back unchanged, body ignored")

	for body, msg := range map[string]map[string]any{
		"all parameters are missing":                              {},
		"device limit: 51 out of range [0-50]":                    {"deviceLimit": 51},
		"valid till should be greater than current timestamp":     {"validTill": 1},
		"all password params should be either present or missing": {"passHash": "x"},
	} {
		got := put(msg)
		assert.Equal(t, 400, got.status, body)
		assert.JSONEq(t, `{"code":"BAD_REQUEST","message":"`+body+`"}`, got.body)
	}
	setAndDisable := put(map[string]any{"passHash": "x", "nonce": "eA==", "opsLimit": 1, "memLimit": 8192, "disablePassword": true})
	assert.Equal(t, 400, setAndDisable.status)
	assert.Contains(t, setAndDisable.body, "can not set and disable password in same request")

	before := albumTime(t, s, alice, a.ID)
	changed := put(map[string]any{"enableDownload": false, "validTill": 0})
	require.Equal(t, 200, changed.status)
	assert.Contains(t, changed.body, `"enableDownload":false`)
	assert.Greater(t, albumTime(t, s, alice, a.ID), before, "a changed link bumps the album")

	// A password as Ente's apps set one; verify-password then takes its hash.
	withPassword := put(map[string]any{"passHash": "aGFzaA==", "nonce": "bm9uY2Vub25jZW5vbmNlIQ==", "opsLimit": 2, "memLimit": 67108864})
	require.Equal(t, 200, withPassword.status)
	assert.Contains(t, withPassword.body, `"passwordEnabled":true`)
	assert.Contains(t, withPassword.body, `"nonce":"bm9uY2Vub25jZW5vbmNlIQ=="`)
	verify := call(t, s, req{method: "POST", path: "/public-collection/verify-password", hdr: as(token, "ua-a"),
		body: map[string]string{"passHash": "aGFzaA=="}})
	assert.Equal(t, 200, verify.status)
	assert.Contains(t, put(map[string]any{"disablePassword": true}).body, `"passwordEnabled":false`)
	assert.Equal(t, 200, call(t, s, req{path: "/public-collection/diff?sinceTime=0", hdr: as(token, "ua-a")}).status)

	assert.Equal(t, 403, call(t, s, req{method: "POST", path: "/collections/share-url",
		hdr: map[string]string{"X-Auth-Token": bob.Token()}, body: map[string]any{"collectionID": a.ID}}).status)
	assert.Equal(t, 404, post(map[string]any{"collectionID": 999999}).status)
	assert.Equal(t, 400, post(map[string]any{"collectionID": alice.AddCollection("u", "uncategorized").ID}).status)

	del := fmt.Sprintf("/collections/share-url/%d", a.ID)
	assert.Equal(t, 403, call(t, s, req{method: "DELETE", path: del, hdr: map[string]string{"X-Auth-Token": bob.Token()}}).status)
	assert.Equal(t, 400, call(t, s, req{method: "DELETE", path: "/collections/share-url/x", hdr: auth}).status)
	assert.Equal(t, 200, call(t, s, req{path: "/public-collection/info", hdr: as(token, "ua-a")}).status, "still on")
	for range 2 {
		d := call(t, s, req{method: "DELETE", path: del, hdr: auth})
		assert.Equal(t, 200, d.status, "idempotent")
		assert.Empty(t, d.body)
	}
	gone := call(t, s, req{path: "/public-collection/info", hdr: as(token, "ua-a")})
	assert.Equal(t, 410, gone.status)
	assert.JSONEq(t, `{"error":"disabled token"}`, gone.body)

	reminted := post(map[string]any{"collectionID": a.ID})
	require.Equal(t, 200, reminted.status)
	assert.NotContains(t, reminted.body, token, "a new link has a new token")
	assert.Contains(t, reminted.body, `"enableJoin":true`, "enableJoin defaults to true")
	assert.Equal(t, 410, call(t, s, req{path: "/public-collection/info", hdr: as(token, "ua-a")}).status,
		"the old token stays off")
}

func TestLinkRefusalsAnswerAsMuseum(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{})
	tok := f.link.Token()
	cases := []struct {
		name   string
		hdr    map[string]string
		status int
		body   string
	}{
		{"no token", map[string]string{}, 401, `{"error":"missing accessToken","context":"album_link"}`},
		{"unknown token", as("ZZZZZZZZZZ", "ua-a"), 401, `{"error":"invalid token"}`},
		{"lower-cased token", as(strings.ToLower(tok), "ua-a"), 401, `{"error":"invalid token"}`},
		{"foreign Origin", as(tok, "ua-a", "Origin", "https://evil.example"), 410, `{"error":"no active subscription"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{f.info, f.diff, f.dlPath} {
				got := call(t, f.s, req{path: path, hdr: c.hdr})
				assert.Equal(t, c.status, got.status, path)
				assert.JSONEq(t, c.body, got.body, path)
			}
		})
	}
	for _, origin := range []string{"https://albums.ente.com", "http://localhost:3002", "https://embed.ente.com"} {
		assert.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "Origin", origin)}).status, origin)
	}
	assert.Equal(t, 200, call(t, f.s, req{path: f.info + "?accessToken=" + tok}).status, "the token in the query")
}

func TestExpiredAndLapsedLinksAnswer410(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{})
	hdr := as(f.link.Token(), "ua-a")
	f.link.SetValidTill(f.s.ServerTime() + 10)
	f.s.Advance(10 * time.Microsecond)
	require.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: hdr}).status, "valid through validTill")
	f.s.Advance(time.Microsecond)
	got := call(t, f.s, req{path: f.info, hdr: hdr})
	assert.Equal(t, 410, got.status)
	assert.JSONEq(t, `{"error":"expired token"}`, got.body)
	f.link.SetValidTill(0)
	require.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: hdr}).status, "validTill 0 revives it")

	f.s.LapseSubscription(f.alice)
	got = call(t, f.s, req{path: f.diff, hdr: hdr})
	assert.Equal(t, 410, got.status)
	assert.JSONEq(t, `{"error":"no active subscription"}`, got.body)
}

func TestDeletingTheAlbumOrAccountTurnsItsLinkOff(t *testing.T) {
	for name, del := range map[string]func(f *linkFixture){
		"album":   func(f *linkFixture) { f.album.Delete() },
		"account": func(f *linkFixture) { f.alice.DeleteAccount() },
	} {
		t.Run(name, func(t *testing.T) {
			f := newLinkFixture(t, enteapitest.LinkOptions{})
			del(f)
			got := call(t, f.s, req{path: f.info, hdr: as(f.link.Token(), "ua-a")})
			assert.Equal(t, 410, got.status)
			assert.JSONEq(t, `{"error":"disabled token"}`, got.body)
		})
	}
}

func TestLinkInfoHidesWhatMuseumHides(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{DeviceLimit: 5, ValidTill: 1 << 62, NoDownload: true})
	bob := f.s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	f.album.ShareWith(bob, "VIEWER")
	f.album.SetVisibility(1)
	got := call(t, f.s, req{path: f.info, hdr: as(f.link.Token(), "ua-a")})
	require.Equal(t, 200, got.status)
	var out struct {
		Collection map[string]json.RawMessage `json:"collection"`
	}
	require.NoError(t, json.Unmarshal([]byte(got.body), &out))
	assert.NotContains(t, out.Collection, "sharees")
	assert.NotContains(t, out.Collection, "magicMetadata")
	assert.JSONEq(t, `[{"url":"","deviceLimit":0,"validTill":0,"enableDownload":false,"enableCollect":false,
		"enableComment":false,"enableJoin":true,"passwordEnabled":false}]`, string(out.Collection["publicURLs"]))
}

func TestLinkDiffIsTheOwnersDiff(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{})
	hdr := as(f.link.Token(), "ua-a")
	var page struct {
		Diff []struct {
			ID            int64           `json:"id"`
			IsDeleted     bool            `json:"isDeleted"`
			UpdationTime  int64           `json:"updationTime"`
			MagicMetadata json.RawMessage `json:"magicMetadata"`
		} `json:"diff"`
		HasMore bool `json:"hasMore"`
	}
	got := call(t, f.s, req{path: f.diff, hdr: hdr})
	require.Equal(t, 200, got.status)
	require.NoError(t, json.Unmarshal([]byte(got.body), &page))
	require.Len(t, page.Diff, 2)
	assert.False(t, page.HasMore)
	since := max(page.Diff[0].UpdationTime, page.Diff[1].UpdationTime)

	got = call(t, f.s, req{path: fmt.Sprintf("/public-collection/diff?sinceTime=%d", since), hdr: hdr})
	assert.JSONEq(t, `{"diff":[],"hasMore":false}`, got.body, "strictly after sinceTime")
	f.files[0].Trash()
	got = call(t, f.s, req{path: fmt.Sprintf("/public-collection/diff?sinceTime=%d", since), hdr: hdr})
	require.NoError(t, json.Unmarshal([]byte(got.body), &page))
	require.Len(t, page.Diff, 1)
	assert.True(t, page.Diff[0].IsDeleted, "a trashed file arrives as a deletion")
	trashed := fmt.Sprintf("/public-collection/files/download/%d", f.files[0].ID)
	assert.Equal(t, 403, call(t, f.s, req{path: trashed, hdr: hdr}).status, "PL.3: not live in the album")

	missing := call(t, f.s, req{path: "/public-collection/diff", hdr: hdr})
	assert.Equal(t, 400, missing.status)
	assert.JSONEq(t, `{"code":"BAD_REQUEST","message":"invalid sinceTime val: "}`, missing.body)
}

func TestLinkDownloadsRedirectWithoutEnforcingEnableDownload(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{NoDownload: true})
	hdr := as(f.link.Token(), "ua-a")
	for _, kind := range []string{"download", "preview"} {
		got := call(t, f.s, req{path: fmt.Sprintf("/public-collection/files/%s/%d", kind, f.files[0].ID), hdr: hdr})
		assert.Equal(t, http.StatusTemporaryRedirect, got.status, kind)
		assert.True(t, strings.HasPrefix(got.header.Get("Location"), f.s.Store.URL), kind)
	}
	other := f.alice.AddAlbum("other").AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	got := call(t, f.s, req{path: fmt.Sprintf("/public-collection/files/download/%d", other.ID), hdr: hdr})
	assert.Equal(t, 403, got.status, "a file of another album")
	assert.JSONEq(t, `{}`, got.body)
	assert.Equal(t, 400, call(t, f.s, req{path: "/public-collection/files/download/x1", hdr: hdr}).status)
	bare := f.album.AddFile(enteapitest.FileSpec{Title: "y.jpg", Data: []byte("y"), NoThumbnail: true})
	assert.Equal(t, 404, call(t, f.s, req{path: fmt.Sprintf("/public-collection/files/preview/%d", bare.ID), hdr: hdr}).status,
		"no thumbnail row")
}

// PL.6: /info works before the password; everything else needs a JWT of
// the current password, in the header or the query.
func TestPasswordLinkNeedsAJWTOfTheCurrentPassword(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{Password: "hunter2"})
	tok := f.link.Token()
	hdr := as(tok, "ua-a")
	info := call(t, f.s, req{path: f.info, hdr: hdr})
	require.Equal(t, 200, info.status)
	var out struct {
		Collection struct {
			PublicURLs []struct {
				PasswordEnabled bool   `json:"passwordEnabled"`
				Nonce           string `json:"nonce"`
				OpsLimit        uint32 `json:"opsLimit"`
				MemLimit        uint64 `json:"memLimit"`
			} `json:"publicURLs"`
		} `json:"collection"`
	}
	require.NoError(t, json.Unmarshal([]byte(info.body), &out))
	p := out.Collection.PublicURLs[0]
	assert.True(t, p.PasswordEnabled)
	assert.NotEmpty(t, p.Nonce)
	assert.EqualValues(t, 1, p.OpsLimit)
	assert.EqualValues(t, 8<<10, p.MemLimit)

	for _, path := range []string{f.diff, f.dlPath} {
		got := call(t, f.s, req{path: path, hdr: hdr})
		assert.Equal(t, 401, got.status, path)
		assert.JSONEq(t, `{"error":{}}`, got.body, path)
	}
	verify := func(passHash string) answer {
		return call(t, f.s, req{method: "POST", path: "/public-collection/verify-password", hdr: hdr,
			body: map[string]string{"passHash": passHash}})
	}
	wrong := verify("d3Jvbmc=")
	assert.Equal(t, 401, wrong.status)
	assert.JSONEq(t, `{}`, wrong.body)

	right := verify(passHash(t, "hunter2", p.Nonce, p.OpsLimit, p.MemLimit))
	require.Equal(t, 200, right.status)
	var jwt struct {
		JWT string `json:"jwtToken"`
	}
	require.NoError(t, json.Unmarshal([]byte(right.body), &jwt))
	require.NotEmpty(t, jwt.JWT)
	assert.Equal(t, 200, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a", "X-Auth-Access-Token-JWT", jwt.JWT)}).status)
	assert.Equal(t, 307, call(t, f.s, req{path: f.dlPath + "?accessToken=" + tok + "&accessTokenJWT=" + jwt.JWT}).status)
	garbage := call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a", "X-Auth-Access-Token-JWT", jwt.JWT+"x")})
	assert.Equal(t, 401, garbage.status)

	f.s.Advance(365 * 24 * time.Hour)
	assert.Equal(t, 200, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a", "X-Auth-Access-Token-JWT", jwt.JWT)}).status)
	f.s.Advance(time.Microsecond)
	assert.Equal(t, 401, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a", "X-Auth-Access-Token-JWT", jwt.JWT)}).status,
		"a JWT lasts 365 days")
	jwt.JWT = passJWT(t, f, "hunter2", p.Nonce)

	f.link.SetPassword("changed")
	got := call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a", "X-Auth-Access-Token-JWT", jwt.JWT)})
	assert.Equal(t, 401, got.status, "a JWT of the old password")
	f.link.SetPassword("")
	assert.Equal(t, 200, call(t, f.s, req{path: f.diff, hdr: hdr}).status, "no password: no JWT needed")
	noPassword := verify("d3Jvbmc=")
	assert.Equal(t, 400, noPassword.status, "verify-password on a link without one")
}

// PL.6: 10 verify-password requests a minute per IP across all links,
// whatever their answer, counted only once the token passed [museum: the
// 11th of a minute was 429, a 400 among the ten].
func TestVerifyPasswordIsLimitedPerIP(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{Password: "hunter2"})
	try := func(token string, extra ...string) int {
		return call(t, f.s, req{method: "POST", path: "/public-collection/verify-password",
			hdr: as(token, "ua-a", extra...), body: map[string]string{"passHash": "d3Jvbmc="}}).status
	}
	open := f.alice.AddAlbum("open").ShareLink(enteapitest.LinkOptions{})
	require.Equal(t, 400, try(open.Token()), "a link without a password")
	for i := range 9 {
		require.Equal(t, 401, try(f.link.Token()), "attempt %d", i+2)
	}
	over := call(t, f.s, req{method: "POST", path: "/public-collection/verify-password",
		hdr: as(f.link.Token(), "ua-a"), body: map[string]string{"passHash": "d3Jvbmc="}})
	assert.Equal(t, 429, over.status)
	assert.JSONEq(t, `{"error":"Rate limit breached, try later"}`, over.body)
	assert.Equal(t, 401, try("ZZZZZZZZZZ"), "the token is checked first")
	assert.Equal(t, 401, try(f.link.Token(), "X-Forwarded-For", "198.51.100.7"), "another IP has its own count")
	f.s.Advance(time.Minute - time.Microsecond)
	assert.Equal(t, 429, try(f.link.Token()), "the same minute")
	f.s.Advance(time.Microsecond)
	assert.Equal(t, 401, try(f.link.Token()), "a new minute")
}

// PL.5: a device is (IP, User-Agent); /info and /diff admit it, other
// routes never check.
func TestDeviceLimitCountsIPAndUserAgentPairs(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{DeviceLimit: 2})
	tok := f.link.Token()
	assert.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a")}).status)
	assert.Equal(t, 200, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-b")}).status)
	for _, path := range []string{f.info, f.diff} {
		got := call(t, f.s, req{path: path, hdr: as(tok, "ua-c")})
		assert.Equal(t, 403, got.status, path)
		assert.JSONEq(t, `{"code":"LINK_DEVICE_LIMIT_EXCEEDED","message":"Public link device limit reached"}`, got.body)
	}
	assert.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-c")}).status, "downloads are not checked")
	assert.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "X-Forwarded-For", "198.51.100.7")}).status,
		"the same UA from another IP is another device")
	assert.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "X-Real-IP", "198.51.100.8")}).status,
		"X-Real-IP names another IP too")
	assert.Equal(t, 2, f.link.Devices())

	f.link.SetDeviceLimit(1)
	assert.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-b")}).status, "a device seen before stays in")
}

func TestDeviceLimit50Means500(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{DeviceLimit: 50})
	for i := range 51 {
		require.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(f.link.Token(), fmt.Sprintf("ua-%d", i))}).status, i)
	}
	f.link.SetDeviceLimit(49)
	assert.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(f.link.Token(), "ua-new")}).status)
}

// PL.5: /info mints a device token; sent back on /info or /diff it admits
// the request whatever its (IP, User-Agent), recording nothing.
func TestDeviceTokenAdmitsAnotherUserAgent(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{DeviceLimit: 1})
	tok := f.link.Token()
	first := call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a")})
	require.Equal(t, 200, first.status)
	dt := first.header.Get("X-Ente-Link-Device-Token")
	require.NotEmpty(t, dt)
	require.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-b")}).status)
	for _, path := range []string{f.info, f.diff} {
		got := call(t, f.s, req{path: path, hdr: as(tok, "ua-b", "X-Auth-Link-Device-Token", dt)})
		assert.Equal(t, 200, got.status, path)
		assert.Empty(t, got.header.Get("X-Ente-Link-Device-Token"), "%s: a valid token far from expiry is not renewed", path)
	}
	assert.Equal(t, 1, f.link.Devices(), "a token admits without recording")
	assert.Empty(t, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a")}).header.Get("X-Ente-Link-Device-Token"),
		"/diff never sends one")
	again := call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "X-Auth-Link-Device-Token", "garbage")})
	assert.Equal(t, 200, again.status, "an invalid token falls back to (IP, UA)")
	assert.NotEmpty(t, again.header.Get("X-Ente-Link-Device-Token"), "and a new one is minted")

	other := f.alice.AddAlbum("other").ShareLink(enteapitest.LinkOptions{DeviceLimit: 1})
	require.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(other.Token(), "ua-z")}).status)
	assert.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(other.Token(), "ua-b", "X-Auth-Link-Device-Token", dt)}).status,
		"a token is bound to its link and access token")
}

func TestAnExpiredDeviceTokenAdmitsNothing(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{DeviceLimit: 1})
	tok := f.link.Token()
	f.link.SetValidTill(f.s.ServerTime() + (40 * 24 * time.Hour).Microseconds())
	dt := call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a")}).header.Get("X-Ente-Link-Device-Token")
	require.NotEmpty(t, dt, "a token that ends with the link")
	f.link.SetValidTill(0)
	f.s.Advance(39 * 24 * time.Hour)
	require.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-b", "X-Auth-Link-Device-Token", dt)}).status)
	f.s.Advance(2 * 24 * time.Hour)
	assert.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-b", "X-Auth-Link-Device-Token", dt)}).status,
		"expired: back to (IP, User-Agent)")
}

func TestDeviceTokenIsRenewedWhenItsEndIsNear(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{ValidTill: 1 << 62})
	tok := f.link.Token()
	f.link.SetValidTill(f.s.ServerTime() + (40 * 24 * time.Hour).Microseconds())
	dt := call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a")}).header.Get("X-Ente-Link-Device-Token")
	require.NotEmpty(t, dt)
	assert.Empty(t, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "X-Auth-Link-Device-Token", dt)}).header.Get("X-Ente-Link-Device-Token"))
	f.s.Advance(10 * 24 * time.Hour)
	assert.Empty(t, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "X-Auth-Link-Device-Token", dt)}).header.Get("X-Ente-Link-Device-Token"),
		"30 days left: not yet")
	f.s.Advance(time.Microsecond)
	assert.NotEmpty(t, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a", "X-Auth-Link-Device-Token", dt)}).header.Get("X-Ente-Link-Device-Token"),
		"under 30 days left: renewed")
}

// PL.4: for a minute, download and preview keep serving the (token, IP,
// User-Agent) that used them before the link changed; /info and /diff and
// anyone else see the change at once.
func TestStaleCacheServesDownloadsForAMinute(t *testing.T) {
	for _, change := range []struct {
		name   string
		apply  func(f *linkFixture)
		status int
	}{
		{"disabled", func(f *linkFixture) { f.link.Disable() }, 410},
		{"password set", func(f *linkFixture) { f.link.SetPassword("new") }, 401},
		{"expired", func(f *linkFixture) {
			f.link.SetValidTill(f.s.ServerTime() + 1)
			f.s.Advance(time.Millisecond)
		}, 410},
	} {
		t.Run(change.name, func(t *testing.T) {
			f := newLinkFixture(t, enteapitest.LinkOptions{})
			tok := f.link.Token()
			require.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-a")}).status)
			change.apply(f)
			assert.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-a")}).status, "cached")
			assert.Equal(t, change.status, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-b")}).status, "another UA")
			assert.Equal(t, change.status, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-a", "X-Forwarded-For", "198.51.100.7")}).status,
				"another IP")
			assert.Equal(t, change.status, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a")}).status, "/diff")
			f.s.Advance(59 * time.Second)
			assert.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-a")}).status, "within the minute")
			f.s.Advance(time.Second)
			assert.Equal(t, change.status, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-a")}).status, "a minute later")
		})
	}
}

func TestLinkRoutesTakeInjectedFaults(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{})
	f.s.Inject("GET /public-collection/info", enteapitest.Status(503))
	assert.Equal(t, 503, call(t, f.s, req{path: f.info, hdr: as(f.link.Token(), "ua-a")}).status)
	assert.Equal(t, 200, call(t, f.s, req{path: f.info, hdr: as(f.link.Token(), "ua-a")}).status)
	assert.Equal(t, 2, f.s.Requests("GET /public-collection/info"))
}

// passHash is Ente's apps' passHash, computed here with x/crypto directly.
func passHash(t *testing.T, pw, nonce string, ops uint32, mem uint64) string {
	t.Helper()
	salt, err := base64.StdEncoding.DecodeString(nonce)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(argon2.IDKey([]byte(pw), salt, ops, uint32(mem/1024), 1, 32))
}

// passJWT verifies pw on the fixture's link and returns the JWT.
func passJWT(t *testing.T, f *linkFixture, pw, nonce string) string {
	t.Helper()
	got := call(t, f.s, req{method: "POST", path: "/public-collection/verify-password", hdr: as(f.link.Token(), "ua-a"),
		body: map[string]string{"passHash": passHash(t, pw, nonce, 1, 8<<10)}})
	require.Equal(t, 200, got.status)
	var out struct {
		JWT string `json:"jwtToken"`
	}
	require.NoError(t, json.Unmarshal([]byte(got.body), &out))
	return out.JWT
}

// albumTime is the album's updationTime as its owner lists it.
func albumTime(t *testing.T, s *enteapitest.Server, u *enteapitest.User, id int64) int64 {
	t.Helper()
	cs, err := s.Client(nil).WithToken(u.Token()).Collections(context.Background(), 0)
	require.NoError(t, err)
	for _, c := range cs {
		if c.ID == id {
			return c.UpdationTime
		}
	}
	t.Fatalf("album %d not listed", id)
	return 0
}

// PL.3: the link's diff pages as the owner's: ascending updationTime, a
// page never splitting one time, so it can be longer than the page size.
func TestLinkDiffPagesWithoutSplittingATime(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{PageSize: 2})
	defer s.Close()
	a := s.AddUser("alice@example.org", "a", enteapitest.UserOptions{}).AddAlbum("x")
	first := a.AddFile(enteapitest.FileSpec{Title: "first.jpg", Data: []byte("1")})
	s.Freeze()
	for i := range 3 {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("same%d.jpg", i), Data: []byte{byte(i)}})
	}
	s.Unfreeze()
	a.AddFile(enteapitest.FileSpec{Title: "last.jpg", Data: []byte("l")})
	first.Edit(func(fs *enteapitest.FileSpec) { fs.Caption = "now the newest" })
	l := a.ShareLink(enteapitest.LinkOptions{})
	var sizes []int
	var times []int64
	var since int64
	for {
		got := call(t, s, req{path: fmt.Sprintf("/public-collection/diff?sinceTime=%d", since), hdr: as(l.Token(), "ua-a")})
		require.Equal(t, 200, got.status)
		var page struct {
			Diff []struct {
				ID           int64 `json:"id"`
				UpdationTime int64 `json:"updationTime"`
			} `json:"diff"`
			HasMore bool `json:"hasMore"`
		}
		require.NoError(t, json.Unmarshal([]byte(got.body), &page))
		sizes = append(sizes, len(page.Diff))
		for _, e := range page.Diff {
			times = append(times, e.UpdationTime)
			since = max(since, e.UpdationTime)
		}
		if !page.HasMore {
			break
		}
	}
	assert.Equal(t, []int{3, 2}, sizes, "three files of one time in the first page of 2")
	assert.IsNonDecreasing(t, times)
	assert.Equal(t, times[0], times[2], "the frozen three lead")
}

// PL.4: the cache keeps a row, expiry included: a cached pair is refused
// the moment the expiry it cached has passed.
func TestACachedLinkStillExpires(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{})
	f.link.SetValidTill(f.s.ServerTime() + 10)
	hdr := as(f.link.Token(), "ua-a")
	require.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: hdr}).status)
	f.s.Advance(10 * time.Microsecond)
	assert.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: hdr}).status, "valid through validTill")
	f.s.Advance(time.Microsecond)
	got := call(t, f.s, req{path: f.dlPath, hdr: hdr})
	assert.Equal(t, 410, got.status)
	assert.JSONEq(t, `{"error":"expired token"}`, got.body)
}
