package enteapitest_test

import (
	"bytes"
	"context"
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
	assert.Equal(t, "null", string(out.Collection["sharees"]), "museum sends sharees: null")
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
