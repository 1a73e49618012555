package cmd

import (
	"os"
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
