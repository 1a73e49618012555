package model

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The link routes whose requests museum admits as a device and never
// serves from its cache (PL.4, PL.5), and the one a password link serves
// without a JWT besides /info (PL.6).
const (
	LinkInfoRoute     = "/public-collection/info"
	LinkDiffRoute     = "/public-collection/diff"
	LinkPasswordRoute = "/public-collection/verify-password"
)

// LinkRequest is what museum's CollectionLinkMiddleware reads of a
// request: its path, the link's credentials (each from its header or its
// query parameter), and who sends it.
type LinkRequest struct {
	Path        string
	AccessToken string
	JWT         string // a password link's
	DeviceToken string
	IP          string // gin's ClientIP
	UserAgent   string
	Origin      string
}

// linkCacheTTL is how long museum's accessTokenCache keeps a link's row
// for one (token, IP, User-Agent) (PL.4).
const linkCacheTTL = int64(time.Minute / time.Microsecond)

// linkCache is one entry of that cache: the row as it was, until when.
type linkCache struct {
	link  *Link
	row   linkRow
	until int64
}

// passwordRefused is a password link's missing, bad or stale JWT (PL.4,
// PL.6).
var passwordRefused = &Refusal{Kind: Unauthorized, Shape: EmptyError}

// linkAuth authenticates a link request with an access token in the
// order museum's CollectionLinkMiddleware does and returns its link, the
// row it is judged by and the device token minted for /info; m.mu is held.
func (m *Museum) linkAuth(r *LinkRequest) (*Link, linkRow, string, error) {
	ls := &m.links
	admits := r.Path == LinkInfoRoute || r.Path == LinkDiffRoute
	key := r.AccessToken + "\x00" + r.IP + "\x00" + r.UserAgent
	c, hit := ls.cache[key]
	if hit && (admits || m.clock.now >= c.until) { // PL.4: /info and /diff never read the cache; entries last a minute
		hit = false
	}
	l, row, checked, minted := c.link, c.row, false, ""
	if !hit {
		var err error
		if l, row, minted, err = m.linkCheck(r, admits); err != nil {
			return nil, linkRow{}, "", err
		}
		checked = true
	}
	if row.validTill > 0 && row.validTill < m.clock.now { // PL.4: a cached row still expires
		return nil, linkRow{}, "", middleware(Gone, "expired token")
	}
	if !checked && !m.passwordOK(r, row) {
		return nil, linkRow{}, "", passwordRefused
	}
	if !hit && !admits {
		ls.cache[key] = linkCache{link: l, row: row, until: m.clock.now + linkCacheTTL} // PL.4
	}
	return l, row, minted, nil
}

// linkCheck judges a request by the link's current row, as museum does
// when its cache has nothing: token, turned off, owner, expiry, password,
// then the device limit on /info and /diff (PL.4, PL.5), recording each
// /info and /diff it admits in the link's Reads; m.mu is held.
func (m *Museum) linkCheck(r *LinkRequest, admits bool) (*Link, linkRow, string, error) {
	ls := &m.links
	l := ls.byToken[r.AccessToken]
	if l == nil {
		return nil, linkRow{}, "", middleware(Unauthorized, "invalid token") // PL.4; tokens are case-sensitive (PL.1)
	}
	row := l.current()
	switch {
	case row.disabled:
		return nil, linkRow{}, "", middleware(Gone, "disabled token") // PL.4
	case ls.lapsed[l.album.Owner.ID] || !allowedOrigin(r.Origin):
		return nil, linkRow{}, "", middleware(Gone, "no active subscription") // PL.4
	case row.validTill > 0 && row.validTill < m.clock.now:
		return nil, linkRow{}, "", middleware(Gone, "expired token") // PL.4
	case !m.passwordOK(r, row):
		return nil, linkRow{}, "", passwordRefused // PL.4, PL.6
	case !admits:
		return l, row, "", nil
	}
	minted, ok := m.admit(l, row, r)
	if !ok {
		return nil, linkRow{}, "", refuse(Forbidden, "LINK_DEVICE_LIMIT_EXCEEDED", "Public link device limit reached") // PL.4, PL.5
	}
	if r.Path != LinkInfoRoute {
		minted = "" // PL.5: /diff never sends one
	}
	l.reads = append(l.reads, LinkRead{Path: r.Path, Sent: r.DeviceToken, Minted: minted})
	return l, row, minted, nil
}

// allowedOrigin is museum's validateOrigin for an owner without a custom
// domain: no Origin, the albums or embed apps, or localhost (PL.3).
func allowedOrigin(o string) bool {
	switch o {
	case "", AlbumsURL, "https://embed.ente.com", "https://embed.ente.io":
		return true
	}
	return strings.HasPrefix(strings.ToLower(o), "http://localhost:")
}

// passwordOK: a link without a password needs nothing; with one, every
// route but /info and /verify-password needs a JWT of its current
// passHash (PL.6); m.mu is held.
func (m *Museum) passwordOK(r *LinkRequest, row linkRow) bool {
	if row.passHash == "" || r.Path == LinkInfoRoute || r.Path == LinkPasswordRoute {
		return true
	}
	var c passwordClaim
	return parseJWT(m.links.secret, r.JWT, &c) && c.PassKey == row.passHash && c.ExpiryTime >= m.clock.now
}

// passwordClaim is museum's LinkPasswordClaim: bound to the passHash only,
// not to the link or the device (PL.6).
type passwordClaim struct {
	PassKey    string `json:"passKey"`
	ExpiryTime int64  `json:"expiryTime"`
}

// deviceClaim is museum's LinkDeviceClaim (PL.5).
type deviceClaim struct {
	Typ      string `json:"typ"`
	Scope    string `json:"scope"`
	LinkID   string `json:"linkID"`
	ATH      string `json:"ath"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	Issuer   string `json:"iss"`
	Audience string `json:"aud"`
}

const (
	microsPerDay       = int64(24 * time.Hour / time.Microsecond)
	deviceTokenLife    = 365 * microsPerDay
	deviceTokenRefresh = 30 * microsPerDay
)

// admit is museum's device admission on /info and /diff (PL.5): a valid
// device token admits without looking at (IP, User-Agent) and records
// nothing, and is renewed only when under 30 days remain; otherwise a pair
// seen before is admitted whatever the limit, a new one only under it
// (50 means 500) and then recorded. It returns the device token minted, if
// any; m.mu is held.
func (m *Museum) admit(l *Link, row linkRow, r *LinkRequest) (minted string, ok bool) {
	linkID := strconv.FormatInt(l.ID, 10)
	now := m.clock.now
	var c deviceClaim
	if r.DeviceToken != "" && parseJWT(m.links.secret, r.DeviceToken, &c) &&
		c.Expiry >= now && c.Typ == "link-device" && c.Scope == "collection" && c.LinkID == linkID &&
		c.Issuer == "museum" && c.Audience == "public-link-device" && hmac.Equal([]byte(c.ATH), []byte(m.tokenHMAC(r.AccessToken))) {
		if c.Expiry-now < deviceTokenRefresh {
			return m.deviceToken(linkID, r.AccessToken, row.validTill), true
		}
		return "", true
	}
	d := device{r.IP, r.UserAgent}
	limit := row.deviceLimit
	if limit == 50 {
		limit = 500
	}
	if !l.devices[d] {
		if limit > 0 && len(l.devices) >= limit {
			return "", false
		}
		l.devices[d] = true
	}
	return m.deviceToken(linkID, r.AccessToken, row.validTill), true
}

// deviceToken mints a device token for the link and access token, valid a
// year or until the link expires (PL.5); m.mu is held.
func (m *Museum) deviceToken(linkID, tok string, validTill int64) string {
	exp := m.clock.now + deviceTokenLife
	if validTill > 0 {
		exp = min(exp, validTill)
	}
	return signJWT(m.links.secret, deviceClaim{Typ: "link-device", Scope: "collection", LinkID: linkID,
		ATH: m.tokenHMAC(tok), IssuedAt: m.clock.now, Expiry: exp, Issuer: "museum", Audience: "public-link-device"})
}

// tokenHMAC binds a device token to the access token (PL.5).
func (m *Museum) tokenHMAC(tok string) string {
	h := hmac.New(sha256.New, m.links.secret)
	h.Write([]byte("ente:public-link-device-token:access-token:v1\x00" + tok))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// jwtHeader is the header of every JWT museum signs: HS256.
var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// signJWT signs claims with HS256.
func signJWT(secret []byte, claims any) string {
	b, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	body := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(b)
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// parseJWT reads the claims of a JWT signed with secret; false for
// anything else.
func parseJWT(secret []byte, tok string, claims any) bool {
	if !strings.HasPrefix(tok, jwtHeader+".") {
		return false
	}
	i := strings.LastIndexByte(tok, '.') // at least the one after the header
	sig, err := base64.RawURLEncoding.DecodeString(tok[i+1:])
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(tok[:i]))
	if err != nil || !hmac.Equal(sig, h.Sum(nil)) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok[len(jwtHeader)+1 : i])
	return err == nil && json.Unmarshal(b, claims) == nil
}
