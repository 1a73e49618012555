package enteapitest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The link routes whose requests museum admits as a device and never
// serves from its cache (PL.4, PL.5).
const (
	linkInfoRoute = "/public-collection/info"
	linkDiffRoute = "/public-collection/diff"
)

// linkCacheTTL is how long museum's accessTokenCache keeps a link's row
// for one (token, IP, User-Agent) (PL.4).
const linkCacheTTL = int64(time.Minute / time.Microsecond)

// linkCache is one entry of that cache: the row as it was, until when.
type linkCache struct {
	link  *Link
	row   linkRow
	until int64
}

// linkAuth authenticates a link request in the order museum's
// CollectionLinkMiddleware does and returns its link and the row it is
// judged by, or answers the refusal itself; s.mu is held. On /info it sets
// the device token header it minted.
func (s *Server) linkAuth(w http.ResponseWriter, r *http.Request) (*Link, linkRow, bool) {
	ls := s.linkState()
	tok := r.Header.Get("X-Auth-Access-Token")
	if tok == "" {
		tok = r.URL.Query().Get("accessToken") // PL.3: header or query
	}
	if tok == "" {
		writeJSON(w, 401, map[string]string{"error": "missing accessToken", "context": "album_link"}) // PL.4
		return nil, linkRow{}, false
	}
	ip, ua := clientIP(r), r.UserAgent()
	admits := r.URL.Path == linkInfoRoute || r.URL.Path == linkDiffRoute
	key := tok + "\x00" + ip + "\x00" + ua
	c, hit := ls.cache[key]
	if hit && (admits || s.clock >= c.until) { // PL.4: /info and /diff never read the cache; entries last a minute
		hit = false
	}
	l, row, checked := c.link, c.row, false
	if !hit {
		if l, row, checked = s.linkCheck(w, r, tok, ip, ua, admits); l == nil {
			return nil, linkRow{}, false
		}
	}
	if row.validTill > 0 && row.validTill < s.clock { // PL.4: a cached row still expires
		middlewareErr(w, 410, "expired token")
		return nil, linkRow{}, false
	}
	if !checked && !s.passwordOK(r, row) {
		writeJSON(w, 401, map[string]any{"error": map[string]any{}}) // PL.4, PL.6
		return nil, linkRow{}, false
	}
	if !hit && !admits {
		ls.cache[key] = linkCache{link: l, row: row, until: s.clock + linkCacheTTL} // PL.4
	}
	return l, row, true
}

// linkCheck judges a request by the link's current row, as museum does
// when its cache has nothing: token, turned off, owner, expiry, password,
// then the device limit on /info and /diff (PL.4, PL.5), recording each
// /info and /diff it admits in the link's Reads. It reports whether the
// password was checked; s.mu is held.
func (s *Server) linkCheck(w http.ResponseWriter, r *http.Request, tok, ip, ua string, admits bool) (*Link, linkRow, bool) {
	ls := s.links
	l := ls.byToken[tok]
	if l == nil {
		middlewareErr(w, 401, "invalid token") // PL.4; tokens are case-sensitive (PL.1)
		return nil, linkRow{}, false
	}
	row := l.current()
	switch {
	case row.disabled:
		middlewareErr(w, 410, "disabled token") // PL.4
	case ls.lapsed[l.album.Owner.ID] || !allowedOrigin(r.Header.Get("Origin")):
		middlewareErr(w, 410, "no active subscription") // PL.4
	case row.validTill > 0 && row.validTill < s.clock:
		middlewareErr(w, 410, "expired token") // PL.4
	case !s.passwordOK(r, row):
		writeJSON(w, 401, map[string]any{"error": map[string]any{}}) // PL.4, PL.6
	default:
		if !admits {
			return l, row, true
		}
		minted, ok := s.admit(l, row, r, tok, ip, ua)
		if !ok {
			apiErr(w, 403, "LINK_DEVICE_LIMIT_EXCEEDED", "Public link device limit reached") // PL.4, PL.5
			return nil, linkRow{}, false
		}
		if r.URL.Path != linkInfoRoute {
			minted = "" // PL.5: /diff never sends one
		}
		if minted != "" {
			w.Header().Set("X-Ente-Link-Device-Token", minted)
		}
		l.reads = append(l.reads, LinkRead{Path: r.URL.Path, Sent: r.Header.Get("X-Auth-Link-Device-Token"), Minted: minted})
		return l, row, true
	}
	return nil, linkRow{}, false
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

// clientIP is gin's ClientIP with every proxy trusted, museum's default:
// the first address of X-Forwarded-For, else X-Real-IP, else the peer
// (PL.5).
func clientIP(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		if first := strings.TrimSpace(strings.Split(xff, ",")[0]); net.ParseIP(first) != nil {
			return first
		}
	}
	if xr := strings.TrimSpace(r.Header.Get("X-Real-IP")); net.ParseIP(xr) != nil {
		return xr
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr) // net/http's is always host:port
	return host
}

// passwordOK: a link without a password needs nothing; with one, every
// route but /info and /verify-password needs a JWT of its current
// passHash (PL.6); s.mu is held.
func (s *Server) passwordOK(r *http.Request, row linkRow) bool {
	if row.passHash == "" || r.URL.Path == linkInfoRoute || r.URL.Path == linkPasswordRoute {
		return true
	}
	jwt := r.Header.Get("X-Auth-Access-Token-JWT")
	if jwt == "" {
		jwt = r.URL.Query().Get("accessTokenJWT") // PL.3: header or query
	}
	var c passwordClaim
	return parseJWT(s.links.secret, jwt, &c) && c.PassKey == row.passHash && c.ExpiryTime >= s.clock
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
// any; s.mu is held.
func (s *Server) admit(l *Link, row linkRow, r *http.Request, tok, ip, ua string) (minted string, ok bool) {
	linkID := strconv.FormatInt(l.ID, 10)
	var c deviceClaim
	if sent := r.Header.Get("X-Auth-Link-Device-Token"); sent != "" && parseJWT(s.links.secret, sent, &c) &&
		c.Expiry >= s.clock && c.Typ == "link-device" && c.Scope == "collection" && c.LinkID == linkID &&
		c.Issuer == "museum" && c.Audience == "public-link-device" && hmac.Equal([]byte(c.ATH), []byte(s.tokenHMAC(tok))) {
		if c.Expiry-s.clock < deviceTokenRefresh {
			return s.deviceToken(linkID, tok, row.validTill), true
		}
		return "", true
	}
	d := device{ip, ua}
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
	return s.deviceToken(linkID, tok, row.validTill), true
}

// deviceToken mints a device token for the link and access token, valid a
// year or until the link expires (PL.5); s.mu is held.
func (s *Server) deviceToken(linkID, tok string, validTill int64) string {
	exp := s.clock + deviceTokenLife
	if validTill > 0 {
		exp = min(exp, validTill)
	}
	return signJWT(s.links.secret, deviceClaim{Typ: "link-device", Scope: "collection", LinkID: linkID,
		ATH: s.tokenHMAC(tok), IssuedAt: s.clock, Expiry: exp, Issuer: "museum", Audience: "public-link-device"})
}

// tokenHMAC binds a device token to the access token (PL.5).
func (s *Server) tokenHMAC(tok string) string {
	m := hmac.New(sha256.New, s.links.secret)
	m.Write([]byte("ente:public-link-device-token:access-token:v1\x00" + tok))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
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
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(body))
	return body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// parseJWT reads the claims of a JWT signed with secret; false for
// anything else.
func parseJWT(secret []byte, tok string, claims any) bool {
	if !strings.HasPrefix(tok, jwtHeader+".") {
		return false
	}
	i := strings.LastIndexByte(tok, '.') // at least the one after the header
	sig, err := base64.RawURLEncoding.DecodeString(tok[i+1:])
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(tok[:i]))
	if err != nil || !hmac.Equal(sig, m.Sum(nil)) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok[len(jwtHeader)+1 : i])
	return err == nil && json.Unmarshal(b, claims) == nil
}

// passwordAttempt counts a verify-password request from ip and reports
// whether it is within 10 a minute; s.mu is held.
func (s *Server) passwordAttempt(ip string) bool {
	return countIn(s.links.attempts, ip, s.clock) <= 10 // ulule/limiter's memory store, museum's "10-M"
}
