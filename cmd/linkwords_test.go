package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
)

// The same link given again without --endpoint goes to the server the
// folder keeps for that link's host; a new folder still needs it, and
// the refusal says the host once.
func TestALinkGivenAgainNeedsNoEndpoint(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	host := "albums.photos.example.org" // a self-hosted albums app
	selfHosted := passwordFile(t, strings.Replace(l.URL(), enteapitest.AlbumsURL, "https://"+host, 1), 0o600)

	other := filepath.Join(t.TempDir(), "other")
	code, _, errOut := e.run("backup", "--init", "--link-file", selfHosted, other)
	require.Equal(t, exitUsage, code, errOut)
	assert.Equal(t, "quak: error: the link is on "+host+": "+publink.ErrSelfHosted.Error()+"\n"+
		"quak: hint: run `quak backup --help`\n", errOut, "the host is said once")

	code, _, errOut = e.run("backup", "--link-file", selfHosted, "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 100, Seed: 3})
	code, _, errOut = e.run("backup", "--link-file", selfHosted, dir)
	require.Equal(t, exitOK, code, "the folder keeps the link's server: %s", errOut)
	assert.FileExists(t, filepath.Join(dir, "Grandma", "c.jpg"))

	code, out, _ := e.run("accounts", "--offline")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "A public link's album on "+s.URL()+": no account, no session needed\n  "+dir+"\n")
	assert.NotContains(t, out, "\n on ", "no empty email")
}

// With no terminal and no --password-file, the hint says what works: a
// first run of a folder that keeps no link yet is run again at a terminal
// (quak backup DIR alone would not know the link); a folder that keeps it
// needs only quak backup DIR there.
func TestALinksPasswordHintFitsTheFolder(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{Password: "hunter2"})
	fresh := filepath.Join(t.TempDir(), "grandma")
	code, _, errOut := e.run("backup", "--init", "--link-file", linkFile(t, l), "--endpoint", s.URL(), fresh)
	assert.Equal(t, exitLogin, code, errOut)
	assert.Contains(t, errOut, "quak: hint: run this command at a terminal to type the link's password, or pass --password-file; "+
		"later runs need only `quak backup "+fresh+"`\n")
	assert.NoDirExists(t, fresh)

	code, _, errOut = e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), "--password-file", passwordFile(t, "hunter2", 0o600), dir)
	require.Equal(t, exitOK, code, errOut)
	l.SetPassword("changed")
	code, _, errOut = e.run("backup", dir)
	assert.Equal(t, exitLogin, code, errOut)
	assert.Contains(t, errOut, "quak: hint: run `quak backup "+dir+"` once at a terminal to type the link's password, or pass --password-file; "+
		"later runs use what the server gave for it\n")
}
