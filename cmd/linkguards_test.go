package cmd

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// A large file of a link's album comes as one stream: the cap of 4
// downloads at once covers connections to the owner's server, not only
// files.
func TestBackupLinkKeepsLargeFilesToOneConnection(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	a.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 40 << 20, Seed: 9})
	for i := 0; i < 4; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("n%d.jpg", i), Size: 100, Seed: byte(10 + i)})
	}
	fl := &inFlight{base: http.DefaultTransport, hold: linkMaxConcurrency, release: make(chan struct{})}
	e.transport = fl
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, a.ShareLink(enteapitest.LinkOptions{})), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, linkMaxConcurrency, fl.most, "never more requests to the store at once than the cap")
}

// --streams given by the user is taken, for a link too.
func TestALinksStreamsAreOneUnlessAsked(t *testing.T) {
	rs := &runSource{who: &account.Account{}, oneStream: true}
	assert.Equal(t, 1, rs.streams(8))
	assert.Equal(t, 1, backupOptions(deps{}, &backupOpts{streams: 8}, "dir", rs, &printer{}).Streams)
	rs.oneStream = false
	assert.Equal(t, 8, rs.streams(8))

	fs := pflag.NewFlagSet("backup", pflag.ContinueOnError)
	o := &backupOpts{fs: fs}
	o.register(fs)
	assert.False(t, o.fs.Changed("streams"))
	require.NoError(t, fs.Parse([]string{"--streams", "6"}))
	assert.True(t, o.fs.Changed("streams"), "what backupSource asks to keep the user's --streams")
}

// --all backs up each folder from the link it keeps: a link, a link file
// or a password given with it would be applied to every folder.
func TestBackupAllRefusesLinkFlags(t *testing.T) {
	e, _, a, _ := linkSetup(t)
	file := linkFile(t, a.ShareLink(enteapitest.LinkOptions{}))
	for _, flags := range [][]string{{"--link-file", file}, {"--link", "https://albums.ente.com/?t=x#y"}, {"--password-file", file}} {
		code, _, errOut := e.run(append([]string{"backup", "--all"}, flags...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", flags, errOut)
		assert.Contains(t, errOut, "--all backs up each folder from the link it keeps")
	}
}

// --account names an account; a link's folder has none, so it is refused
// rather than silently ignored.
func TestBackupLinkFolderRefusesAnAccount(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, a.ShareLink(enteapitest.LinkOptions{})), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = e.run("backup", "--account", "someone@example.org", dir)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "follows a public link")
}

// A link's server that cannot be reached is an outage (75), as an
// account's server is: cron and --all try again later.
func TestBackupLinkOfAnUnreachableServerIsATemporaryFailure(t *testing.T) {
	e, _, a, dir := linkSetup(t)
	code, _, errOut := e.run("backup", "--attempts", "1", "--link-file", linkFile(t, a.ShareLink(enteapitest.LinkOptions{})),
		"--endpoint", "http://127.0.0.1:1", dir)
	assert.Equal(t, exitTempFail, code, errOut)
	assert.Contains(t, errOut, "cannot be reached")
}

// --all names a link's folder as one, never with an empty account.
func TestBackupAllNamesALinkFolder(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	l.Disable()
	code, out, errOut := e.run("backup", "--all")
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, errOut, "a public link, "+dir+": ")
	assert.NotContains(t, out+errOut, ": , ")
}

// A link folder whose link file is gone asks for the link again, not for a
// login, and writes nothing.
func TestBackupLinkFolderWithoutItsLinkFileAsksForTheLink(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, a.ShareLink(enteapitest.LinkOptions{})), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, os.Remove(folder.At(dir).LinkPath()))
	code, _, errOut = e.run("backup", dir)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "give the link again with --link-file")
	assert.NotContains(t, errOut, "quak login")
}

// A folder given as the link file is named as one, with no chmod advice.
func TestALinkFileThatIsAFolder(t *testing.T) {
	e, s, _, dir := linkSetup(t)
	code, _, errOut := e.run("backup", "--link-file", t.TempDir(), "--endpoint", s.URL(), dir)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "is a folder, not a file")
	assert.NotContains(t, errOut, "chmod")
}
