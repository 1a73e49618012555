package enteapitest_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

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
