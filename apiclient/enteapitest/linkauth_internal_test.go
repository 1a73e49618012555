package enteapitest

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A device token admits only when every claim is museum's and it is bound
// to this link and this access token (PL.5).
func TestDeviceTokenClaimsAreAllChecked(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	a := s.AddUser("a@example.org", "a", UserOptions{}).AddAlbum("x")
	l := a.ShareLink(LinkOptions{DeviceLimit: 1})
	s.mu.Lock()
	defer s.mu.Unlock()
	l.devices[device{"192.0.2.1", "first"}] = true // the one slot is taken
	good := deviceClaim{Typ: "link-device", Scope: "collection", LinkID: strconv.FormatInt(l.ID, 10),
		ATH: s.tokenHMAC(l.token), IssuedAt: s.clock, Expiry: s.clock + deviceTokenLife, Issuer: "museum", Audience: "public-link-device"}
	cases := map[string]func(c *deviceClaim){
		"museum's":         func(*deviceClaim) {},
		"typ":              func(c *deviceClaim) { c.Typ = "other" },
		"scope":            func(c *deviceClaim) { c.Scope = "file" },
		"link":             func(c *deviceClaim) { c.LinkID = "1" },
		"access token":     func(c *deviceClaim) { c.ATH = s.tokenHMAC("OTHERTOKEN") },
		"issuer":           func(c *deviceClaim) { c.Issuer = "elsewhere" },
		"audience":         func(c *deviceClaim) { c.Audience = "other" },
		"expired":          func(c *deviceClaim) { c.Expiry = s.clock - 1 },
		"expiring now":     func(c *deviceClaim) { c.Expiry = s.clock },
		"another's secret": func(*deviceClaim) {},
	}
	for name, change := range cases {
		c := good
		change(&c)
		secret := s.links.secret
		if name == "another's secret" {
			secret = []byte("not museum's secret")
		}
		r := httptest.NewRequest("GET", linkInfoRoute, nil)
		r.Header.Set("X-Auth-Link-Device-Token", signJWT(secret, c))
		_, ok := s.admit(l, l.row, r, l.token, "192.0.2.9", "second")
		want := name == "museum's" || name == "expiring now"
		assert.Equal(t, want, ok, name)
	}
	assert.Len(t, l.devices, 1, "a token admits without recording")
}
