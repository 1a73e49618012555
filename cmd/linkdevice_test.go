package cmd

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// keptLink is the link the folder dir keeps.
func keptLink(t *testing.T, dir string) *folder.LinkSecrets {
	t.Helper()
	f := folder.At(dir)
	b, err := os.ReadFile(f.LinkPath())
	require.NoError(t, err)
	sec, err := f.ParseLink(b)
	require.NoError(t, err)
	return sec
}

// allSend checks that every read of reads sent the device token want,
// described as what, without printing it.
func allSend(t *testing.T, reads []enteapitest.LinkRead, want, what, why string) {
	t.Helper()
	for i, r := range reads {
		assert.True(t, r.Sent == want, "%s: read %d (%s) sends %s", why, i, r.Path, what)
	}
}

// museum mints a device token on a link's first /info. The run sends it
// back on every /info and /diff that follows, keeps it, and the next run
// sends the kept one from its first request on: museum then admits quak by
// its token, whatever the IP, rather than by a device slot.
func TestBackupLinkResendsItsDeviceToken(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	first := l.Reads()
	require.GreaterOrEqual(t, len(first), 2, "an /info, then a /diff")
	assert.Equal(t, "/public-collection/info", first[0].Path)
	assert.True(t, first[0].Sent == "", "a first run has no token to send")
	minted := first[0].Minted
	require.NotEmpty(t, minted)
	allSend(t, first[1:], minted, "the token minted", "the run that was given the token")
	assert.True(t, keptLink(t, dir).DeviceToken == minted, "the folder keeps the token minted")

	a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 100, Seed: 3})
	code, out, errOut := e.run("backup", "--json", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"new":1`)
	second := l.Reads()[len(first):]
	require.GreaterOrEqual(t, len(second), 2)
	assert.Equal(t, "/public-collection/info", second[0].Path)
	assert.True(t, second[0].Minted == "", "a valid token far from its end is not renewed")
	allSend(t, second, minted, "the token kept", "the next run")
	assert.True(t, keptLink(t, dir).DeviceToken == minted, "still kept")
}

// credentialWire records, for each request through it, whether it carried
// a password's JWT; it never keeps the JWT itself.
type credentialWire struct {
	mu      sync.Mutex
	withJWT int
}

func (w *credentialWire) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Auth-Access-Token-JWT") != "" || r.URL.Query().Get("accessTokenJWT") != "" {
		w.mu.Lock()
		w.withJWT++
		w.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (w *credentialWire) jwts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.withJWT
}

// A folder keeps one link's password token and device token: given the
// same link again on the same server, a run sends both (no password asked,
// no new device token); given another link, it sends neither.
func TestBackupLinkReusesKeptTokensOnlyForTheSameLink(t *testing.T) {
	e, s, a, l, dir, kept := linkedWithPassword(t)
	n, verified := len(l.Reads()), s.Requests("POST /public-collection/verify-password")
	require.Equal(t, 1, verified)

	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL()+"/", dir) // no --password-file, no terminal
	require.Equal(t, exitOK, code, "the kept password token is reused: %s", errOut)
	assert.Equal(t, verified, s.Requests("POST /public-collection/verify-password"), "no password sent again")
	again := l.Reads()[n:]
	require.NotEmpty(t, again)
	allSend(t, again, kept.DeviceToken, "the token kept", "the same link again")

	other := a.Owner.AddAlbum("Cousins").ShareLink(enteapitest.LinkOptions{Password: "another"})
	wire := &credentialWire{}
	e.transport = wire
	code, _, errOut = e.run("backup", "--link-file", linkFile(t, other), "--endpoint", s.URL(), dir)
	assert.NotEqual(t, exitOK, code, "another link's password is not known")
	assert.Contains(t, errOut, "pass --password-file")
	reads := other.Reads()
	require.NotEmpty(t, reads, "the other link's /info")
	allSend(t, reads, "", "no device token", "another link")
	assert.Zero(t, wire.jwts(), "the kept password token is not sent for another link")
	assert.Zero(t, s.Requests("GET /public-collection/diff")-diffs(l.Reads()), "no /diff refused for a foreign password token")
	noSecrets(t, "the output", errOut, []string{kept.JWT, kept.DeviceToken})
}

// linkedWithPassword backs up a password-protected link of a's into dir,
// and returns what the folder then keeps of the link.
func linkedWithPassword(t *testing.T) (*env, *enteapitest.Server, *enteapitest.Album, *enteapitest.Link, string, *folder.LinkSecrets) {
	t.Helper()
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{Password: "open sesame"})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--password-file", passwordFile(t, "open sesame", 0o600),
		"--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	kept := keptLink(t, dir)
	require.NotEmpty(t, kept.JWT)
	require.NotEmpty(t, kept.DeviceToken)
	return e, s, a, l, dir, kept
}

// diffs counts the /diff requests among reads.
func diffs(reads []enteapitest.LinkRead) int {
	n := 0
	for _, r := range reads {
		if strings.HasSuffix(r.Path, "/diff") {
			n++
		}
	}
	return n
}

// The same link's tokens are kept for its server alone: the same access
// token on another endpoint gets neither the password token nor the device
// token another server gave.
func TestBackupLinkKeepsItsTokensForItsServer(t *testing.T) {
	e, s, _, l, dir, kept := linkedWithPassword(t)
	n := len(l.Reads())

	proxy := newTCPProxy(t, strings.TrimPrefix(s.URL(), "http://")) // another endpoint, the same server behind it
	wire := &credentialWire{}
	e.transport = wire
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", proxy.url(), dir)
	assert.NotEqual(t, exitOK, code, "on another server, the password is asked again")
	assert.Contains(t, errOut, "pass --password-file")
	reads := l.Reads()[n:]
	require.NotEmpty(t, reads, "the /info through the other endpoint")
	allSend(t, reads, "", "no device token", "another endpoint")
	assert.Zero(t, wire.jwts(), "the kept password token is not sent to another server")
	noSecrets(t, "the output", errOut, []string{kept.JWT, kept.DeviceToken})
}
