package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func TestShownEscapesWhatATerminalWouldActOn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain name.jpg", "plain name.jpg"},
		{"Été 2024 🏖️ 👨‍👩‍👧", "Été 2024 🏖️ 👨‍👩‍👧"}, // emoji joiners are text, not controls
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"x\r0 failed", `x\r0 failed`},
		{"two\nlines", `two\nlines`},
		{"tab\there", `tab\there`},
		{"bell\a", `bell\a`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"photo\u202egpj.exe", `photo\u202egpj.exe`},
		{"iso\u2066late\u2069", `iso\u2066late\u2069`},
		{"mark\u200e\u200f\u061c", `mark\u200e\u200f\u061c`},
		{"sep\u2028\u2029", `sep\u2028\u2029`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash`, `back\slash`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, shown(tc.in))
			assert.Equal(t, tc.want, shown(shown(tc.in)), "showing twice changes nothing")
		})
	}
}

// hostile are names a shared album's owner could choose: one that clears
// the screen and turns the rest of its line around, one that forges a
// summary line of its own.
const (
	hostileAlbum = "Evil\x1b[2J\u202eAlbum"
	hostileTitle = "x\r0 failed\nquak: \u009b31mok.jpg"
)

// requireShown fails when out holds anything a terminal acts on but the
// line feeds that end quak's own lines.
func requireShown(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if i := strings.IndexFunc(line, hidden); i >= 0 {
			t.Fatalf("%s prints a control character at %d of %q", what, i, line)
		}
	}
	require.NotContains(t, out, "\nquak: \u009b", what)
}

// Names from the server reach people escaped, on the terminal and in the
// log file, in every command; JSON keeps them exact.
func TestNamesFromTheServerAreShownEscaped(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum(hostileAlbum)
	bad := a.AddFile(enteapitest.FileSpec{Title: hostileTitle, Size: 10, Seed: 2})
	a.AddFile(enteapitest.FileSpec{Title: "fine\x1b]0;pwned\a.jpg", Data: enteapitest.FakeJPEG("fine")})
	lostThumb(t, a, "lost\x1b[1A.jpg")
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(3), 5)...)
	logFile := filepath.Join(t.TempDir(), "quak.log")

	code, out, errOut := e.run("backup", "-v", "--log-file", logFile, dir)
	require.Equal(t, exitPartial, code, errOut)
	requireShown(t, "backup's stderr", errOut)
	requireShown(t, "backup's stdout", out)
	assert.Contains(t, errOut, `failed: Evil\x1b[2J\u202eAlbum / x\r0 failed\nquak: \u009b31mok.jpg (file`)
	logged, err := os.ReadFile(logFile)
	require.NoError(t, err)
	requireShown(t, "the log file", string(logged))
	assert.Contains(t, string(logged), `x\r0 failed\nquak: \u009b31mok.jpg`)

	code, out, _ = e.run("backup", "--json", dir)
	require.Equal(t, exitPartial, code)
	failed := ofType(jsonLinesOf(t, out), "failed")
	require.Len(t, failed, 1)
	assert.Equal(t, hostileTitle, failed[0]["title"], "JSON keeps the name exact")
	assert.Equal(t, hostileAlbum, failed[0]["album"])

	code, out, errOut = e.run("status", "--offline", "--log-file", logFile, dir)
	require.Equal(t, exitStale, code, errOut)
	requireShown(t, "status", out+errOut)
	assert.Contains(t, out, `x\r0 failed\nquak: \u009b31mok.jpg`)

	albumDir := onlyAlbumFolder(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(albumDir, "extra\x1b[31m.jpg"), []byte("x"), 0o644))
	code, out, errOut = e.run("verify", dir)
	require.Equal(t, exitPartial, code, errOut)
	requireShown(t, "verify", out+errOut)
	assert.Contains(t, errOut, `extra\x1b[31m.jpg`)

	code, out, errOut = e.run("helper", "fix-missing-thumbnails", "--dry-run")
	require.Equal(t, exitOK, code, errOut)
	requireShown(t, "the thumbnail helper", out+errOut)
	assert.Contains(t, errOut, `Evil\x1b[2J\u202eAlbum / lost\x1b[1A.jpg`)

	bob := s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	code, _, errOut = e.run("login", "--email", bob.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, bob.Password, 0o600))
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut = e.run("restore", "--account", bob.Email, "--dry-run", dir)
	require.Equal(t, exitOK, code, errOut)
	requireShown(t, "restore", out+errOut)
	assert.Contains(t, errOut, `would upload fine\x1b]0;pwned\a.jpg`)
}

// onlyAlbumFolder is the one album folder in dir.
func onlyAlbumFolder(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var albums []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			albums = append(albums, e.Name())
		}
	}
	require.Len(t, albums, 1)
	return filepath.Join(dir, albums[0])
}

// A line printed where a progress bar was drawn is logged as the terminal
// shows it: without the bar's drawing before the carriage return.
func TestTheLogHoldsWhatALineShowsOverABar(t *testing.T) {
	var logged, term strings.Builder
	h := &humanOut{real: &term, log: &logFile{w: nopCloser{&logged}, now: time.Now}}
	_, err := h.Write([]byte("checking 3/9 [===>    ]\r                      \rquak: lost, repaired: A / b.jpg\n\r"))
	require.NoError(t, err)
	_, err = h.Write([]byte("\rchecking 4/9 [====>   ]\rquak: done\r\n"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(logged.String(), "\n"), "\n")
	require.Len(t, lines, 2, logged.String())
	assert.True(t, strings.HasSuffix(lines[0], " quak: lost, repaired: A / b.jpg"), lines[0])
	assert.True(t, strings.HasSuffix(lines[1], " quak: done"), lines[1])
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
