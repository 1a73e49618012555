package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// restored is a backup of alice's account, with bob logged in too.
func restored(t *testing.T) (*env, *enteapitest.Server, string) {
	t.Helper()
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "one.jpg", Data: enteapitest.FakeJPEG("one")})
	a.AddFile(enteapitest.FileSpec{Title: "two.jpg", Data: enteapitest.FakeJPEG("two")})
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	bob := s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	code, _, errOut = e.run("login", "--email", bob.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, bob.Password, 0o600))
	require.Equal(t, exitOK, code, errOut)
	return e, s, dir
}

func TestRestoreCommandPlansUploadsAndThenHasNothingLeft(t *testing.T) {
	e, s, dir := restored(t)
	code, _, errOut := e.run("restore", dir)
	assert.Equal(t, exitUsage, code, "two accounts: which one")
	assert.Contains(t, errOut, "several accounts")

	code, out, errOut := e.run("restore", "--account", "bob@example.org", "--dry-run", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "2 of 2 files would upload to bob@example.org")
	assert.Contains(t, errOut, "would create album Trip")
	assert.Zero(t, s.Requests("POST /files"))

	code, out, errOut = e.run("restore", "--account", "bob@example.org", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "2 of 2 files uploaded")

	code, out, errOut = e.run("restore", "--account", "bob@example.org", "--json", dir)
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &sum))
	assert.Equal(t, "summary", sum["type"])
	assert.EqualValues(t, 0, sum["uploaded"], "a second restore uploads nothing")
	assert.EqualValues(t, 2, sum["present"])
	assert.EqualValues(t, 0, sum["bytes"])
}

func TestRestoreCommandExitCodes(t *testing.T) {
	e, s, dir := restored(t)
	code, out, errOut := e.run("restore", "--account", "bob@example.org", t.TempDir())
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Empty(t, out, "a refused restore prints no summary of nothing")

	s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(400), 1)...)
	code, _, errOut = e.run("restore", "--account", "bob@example.org", "-q", dir)
	assert.Equal(t, exitPartial, code)
	assert.Contains(t, errOut, "1 file could not be restored")

	s.Inject("POST /files", enteapitest.Status(426)) // the file that failed: its body is sent again
	code, _, errOut = e.run("restore", "--account", "bob@example.org", dir)
	assert.Equal(t, exitFatal, code)
	assert.Contains(t, errOut, "out of storage")
}
