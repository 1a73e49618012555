package enteapitest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

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

// Reads record each /info and /diff a link admitted: the device token sent
// and the one minted; a refused request is not among them.
func TestLinkReadsRecordTheDeviceTokens(t *testing.T) {
	f := newLinkFixture(t, enteapitest.LinkOptions{DeviceLimit: 1})
	tok := f.link.Token()
	dt := call(t, f.s, req{path: f.info, hdr: as(tok, "ua-a")}).header.Get("X-Ente-Link-Device-Token")
	require.NotEmpty(t, dt)
	require.Equal(t, 200, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a", "X-Auth-Link-Device-Token", dt)}).status)
	require.Equal(t, 200, call(t, f.s, req{path: f.diff, hdr: as(tok, "ua-a")}).status)
	require.Equal(t, 403, call(t, f.s, req{path: f.info, hdr: as(tok, "ua-b")}).status)
	require.Equal(t, 307, call(t, f.s, req{path: f.dlPath, hdr: as(tok, "ua-a")}).status)

	reads := f.link.Reads()
	require.Len(t, reads, 3, "the refused /info and the download are not reads")
	assert.Equal(t, f.info, reads[0].Path)
	assert.True(t, reads[0].Sent == "", "the first /info sent none")
	assert.True(t, reads[0].Minted == dt, "the first /info minted the token its answer carried")
	assert.Equal(t, "/public-collection/diff", reads[1].Path, "the path, without the query")
	assert.True(t, reads[1].Sent == dt, "the /diff sent it back")
	assert.True(t, reads[1].Minted == "", "/diff never carries one")
	assert.True(t, reads[2].Sent == "", "nor the last /diff")
	assert.True(t, reads[2].Minted == "", "/diff never carries one, even when museum mints one")
}
