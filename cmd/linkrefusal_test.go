package cmd

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

func TestBackupLinkWithAPasswordRunsFromCronAfterTheFirstRun(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{Password: "hunter2"})
	prompts := 0
	e.readPassword = func() ([]byte, error) { prompts++; return []byte("hunter2"), nil }
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 1, prompts)
	assert.Contains(t, errOut, `The link to "Grandma" has a password.`)
	assert.FileExists(t, filepath.Join(dir, "Grandma", "a.jpg"))

	e.readPassword = nil // cron: no terminal
	a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 100, Seed: 3})
	code, _, errOut = e.run("backup", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.FileExists(t, filepath.Join(dir, "Grandma", "c.jpg"))
	assert.Equal(t, 1, s.Requests("POST /public-collection/verify-password"), "the kept token, not the password again")
	noSecrets(t, "the output", errOut, secretsOf(t, l, dir))

	l.SetPassword("changed") // the kept token stops working
	code, _, errOut = e.run("backup", dir)
	assert.Equal(t, exitLogin, code)
	assert.Contains(t, errOut, "the link needs its password")
	assert.Contains(t, errOut, "--password-file")
	code, _, errOut = e.run("backup", "--password-file", passwordFile(t, "changed", 0o600), dir)
	assert.Equal(t, exitOK, code, errOut)
}

func TestBackupLinkWrongPasswordIsAskedOnce(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{Password: "hunter2"})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(),
		"--password-file", passwordFile(t, "wrong", 0o600), dir)
	assert.Equal(t, exitLogin, code)
	assert.Contains(t, errOut, "wrong password for the link")
	assert.Contains(t, errOut, "never retries")
	assert.Equal(t, 1, s.Requests("POST /public-collection/verify-password"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)

	code, _, errOut = e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	assert.Equal(t, exitLogin, code, "no terminal, no password file")
	assert.Contains(t, errOut, "no terminal")
	assert.Equal(t, 1, s.Requests("POST /public-collection/verify-password"))
}

func TestBackupLinkThatStoppedWorkingLeavesTheFolderAlone(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		stop      func(s *enteapitest.Server, l *enteapitest.Link)
	}{
		{"disabled", "turned off or replaced", func(_ *enteapitest.Server, l *enteapitest.Link) { l.Disable() }},
		{"expired", "has expired", func(s *enteapitest.Server, l *enteapitest.Link) { l.SetValidTill(s.ServerTime() - 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s, a, dir := linkSetup(t)
			l := a.ShareLink(enteapitest.LinkOptions{})
			code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
			require.Equal(t, exitOK, code, errOut)
			before, err := os.ReadFile(filepath.Join(dir, "Grandma", "a.jpg"))
			require.NoError(t, err)
			tc.stop(s, l)
			code, _, errOut = e.run("backup", "--prune", dir)
			assert.Equal(t, exitFatal, code)
			assert.Contains(t, errOut, tc.msg)
			assert.Contains(t, errOut, "ask the album's owner for a new link")
			after, err := os.ReadFile(filepath.Join(dir, "Grandma", "a.jpg"))
			require.NoError(t, err)
			assert.Equal(t, before, after)
			_, err = os.Stat(filepath.Join(dir, folder.StateDir, "trash"))
			assert.True(t, errors.Is(err, os.ErrNotExist) || isEmptyDir(t, filepath.Join(dir, folder.StateDir, "trash")))
		})
	}
}

func isEmptyDir(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries) == 0
}

func TestBackupLinkStopsAtTheDeviceLimitWithoutTryingAgain(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{DeviceLimit: 1})
	req, err := http.NewRequest("GET", s.URL()+"/public-collection/info", nil)
	require.NoError(t, err)
	req.Header.Set("X-Auth-Access-Token", l.Token())
	req.Header.Set("User-Agent", "a browser")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 1, l.Devices())

	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	assert.Equal(t, exitFatal, code)
	assert.Contains(t, errOut, "device limit")
	assert.Contains(t, errOut, "raise its device limit")
	assert.Equal(t, 2, s.Requests("GET /public-collection/info"), "one request of quak's, never repeated")
	assert.Equal(t, 1, l.Devices())
}

func TestLinkFolderWithStatusVerifyAndAll(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)

	code, out, errOut := e.run("status", dir)
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "a public link's album")
	assert.Contains(t, out, "works")
	code, out, _ = e.run("verify", dir)
	assert.Equal(t, exitOK, code, out)

	a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 100, Seed: 3})
	code, out, errOut = e.run("backup", "--all")
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "== a public link on "+s.URL())
	assert.FileExists(t, filepath.Join(dir, "Grandma", "c.jpg"))

	l.Disable()
	code, out, errOut = e.run("status", dir)
	assert.Equal(t, exitLogin, code, out+errOut)
	assert.Contains(t, errOut, "no longer works")
	assert.Contains(t, errOut, "hint: ask the album's owner for a new link")
	assert.NotContains(t, errOut, "quak login")
	noSecrets(t, "the output", out+errOut, secretsOf(t, l, dir))
}

func TestAccountsListsALinkFolderAsNeedingNoLogin(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, a.ShareLink(enteapitest.LinkOptions{})), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := e.run("accounts")
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "A public link's album on "+s.URL()+": no account, no session needed")
	assert.Contains(t, out, dir)
}
