package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A nightly run finds the server gone while one saved file was deleted by
// hand: the outage is the same as any other, exit 75, not a fatal exit 1.
func TestAnOutageWhileRestoringALocallyDeletedFileExits75(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	proxy := newTCPProxy(t, strings.TrimPrefix(s.URL(), "http://"))
	e := newEnv(t)
	if code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", proxy.url(), "--password-file", passwordFile(t, u.Password, 0o600)); code != exitOK {
		t.Fatal(errOut)
	}
	dir := t.TempDir()
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 200, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 200, Seed: 2})
	code, _, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, os.Remove(filepath.Join(dir, "Trip", "a.jpg")))
	proxy.stop()
	code, out, errOut := e.run("backup", "-q", dir)
	assert.Equal(t, exitTempFail, code, "stdout %q stderr %q", out, errOut)
	assert.Contains(t, errOut, "cannot be reached")
	last, err := readRecord(filepath.Join(dir, ".quak", "last-run.json"))
	require.NoError(t, err)
	assert.Equal(t, exitTempFail, last.ExitCode)
	scode, lines := statusOf(t, e, dir)
	assert.NotEqual(t, exitOK, scode, "status after a run the server left half-way: %s", lines)
}
