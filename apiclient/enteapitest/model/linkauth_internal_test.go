package model

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A device token admits only when every claim is museum's and it is bound
// to this link and this access token (PL.5).
func TestDeviceTokenClaimsAreAllChecked(t *testing.T) {
	m := New(Config{})
	a := m.AddUser("a@example.org", "a", UserOptions{}).AddAlbum("x")
	l := a.ShareLink(LinkOptions{DeviceLimit: 1})
	m.mu.Lock()
	defer m.mu.Unlock()
	l.devices[device{"192.0.2.1", "first"}] = true // the one slot is taken
	now := m.clock.now
	good := deviceClaim{Typ: "link-device", Scope: "collection", LinkID: strconv.FormatInt(l.ID, 10),
		ATH: m.tokenHMAC(l.token), IssuedAt: now, Expiry: now + deviceTokenLife, Issuer: "museum", Audience: "public-link-device"}
	cases := map[string]func(c *deviceClaim){
		"museum's":         func(*deviceClaim) {},
		"typ":              func(c *deviceClaim) { c.Typ = "other" },
		"scope":            func(c *deviceClaim) { c.Scope = "file" },
		"link":             func(c *deviceClaim) { c.LinkID = "1" },
		"access token":     func(c *deviceClaim) { c.ATH = m.tokenHMAC("OTHERTOKEN") },
		"issuer":           func(c *deviceClaim) { c.Issuer = "elsewhere" },
		"audience":         func(c *deviceClaim) { c.Audience = "other" },
		"expired":          func(c *deviceClaim) { c.Expiry = now - 1 },
		"expiring now":     func(c *deviceClaim) { c.Expiry = now },
		"another's secret": func(*deviceClaim) {},
	}
	for name, change := range cases {
		c := good
		change(&c)
		secret := m.links.secret
		if name == "another's secret" {
			secret = []byte("not museum's secret")
		}
		r := &LinkRequest{Path: LinkInfoRoute, AccessToken: l.token, DeviceToken: signJWT(secret, c), IP: "192.0.2.9", UserAgent: "second"}
		_, ok := m.admit(l, l.row, r)
		want := name == "museum's" || name == "expiring now"
		assert.Equal(t, want, ok, name)
	}
	assert.Len(t, l.devices, 1, "a token admits without recording")
}
