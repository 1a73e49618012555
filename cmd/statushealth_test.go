package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
)

// statusOf runs quak status --offline and returns its code and Problem lines.
func statusOf(t *testing.T, e *env, dir string) (int, string) {
	t.Helper()
	code, out, errOut := e.run("status", "--offline", dir)
	var problems []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Problem:") || strings.HasPrefix(l, "Status:") {
			problems = append(problems, l)
		}
	}
	return code, strings.Join(problems, "\n") + errOut
}

// quak status is never "healthy" when the last run did not fully back up,
// whatever the reason, and says the reason.
func TestStatusNeverHealthyAfterALesserRun(t *testing.T) {
	setup := func(t *testing.T) (*env, *enteapitest.Server, *enteapitest.User, string) {
		t.Helper()
		e, s, u, dir := loggedIn(t)
		u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
		require.Equal(t, exitOK, first(e.run("backup", dir)))
		code, lines := statusOf(t, e, dir)
		require.Equal(t, exitOK, code, lines)
		require.Contains(t, lines, "Status:        healthy")
		return e, s, u, dir
	}
	t.Run("refused: lock held", func(t *testing.T) {
		e, _, _, dir := setup(t)
		release := holdLock(t, dir)
		require.Equal(t, exitLocked, first(e.run("backup", dir)))
		release()
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "Problem:       the last run, at ")
		assert.Contains(t, lines, "was refused before it started (exit code 4): another quak run")
		require.Equal(t, exitOK, first(e.run("backup", dir)))
		code, lines = statusOf(t, e, dir)
		assert.Equal(t, exitOK, code, "a later run that succeeds clears it: %s", lines)
	})
	t.Run("refused: the thumbnail helper reads the folder", func(t *testing.T) {
		e, _, _, dir := setup(t)
		st, err := folder.At(dir).OpenStateReadOnly() // as --from DIR holds it
		require.NoError(t, err)
		code, _, errOut := e.run("backup", dir)
		require.NoError(t, st.Close())
		assert.Equal(t, exitLocked, code, "the lock's code, not a fatal error: %s", errOut)
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "was refused before it started (exit code 4)")
	})
	t.Run("a record that contradicts itself", func(t *testing.T) {
		e, _, _, dir := setup(t)
		f := folder.At(dir)
		last, err := f.LastRun()
		require.NoError(t, err)
		last.ExitCode = exitPartial // outcome still "ok"
		b, err := json.Marshal(last)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f.LastRunPath(), b, 0o644))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code, lines)
		assert.Contains(t, lines, "contradicts itself")
	})
	t.Run("refused: session too open", func(t *testing.T) {
		e, _, _, dir := setup(t)
		require.NoError(t, os.Chmod(e.sessionFile(), 0o644))
		require.NotEqual(t, exitOK, first(e.run("backup", dir)))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "was refused before it started")
	})
	t.Run("metadata only", func(t *testing.T) {
		e, _, _, dir := setup(t)
		require.Equal(t, exitOK, first(e.run("backup", "--metadata-only", dir)))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "the last run was --metadata-only")
	})
	t.Run("prune refused", func(t *testing.T) {
		e, _, u, dir := setup(t)
		a := u.AddAlbum("B")
		f1 := a.AddFile(enteapitest.FileSpec{Title: "1.jpg", Size: 10, Seed: 2})
		f2 := a.AddFile(enteapitest.FileSpec{Title: "2.jpg", Size: 10, Seed: 3})
		require.Equal(t, exitOK, first(e.run("backup", dir)))
		success, err := folder.At(dir).LastSuccess()
		require.NoError(t, err)
		a.Remove(f1)
		a.Remove(f2)
		require.Equal(t, exitOK, first(e.run("backup", "--prune", "--max-delete", "1", dir)))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "the last run's --prune was refused")
		after, err := folder.At(dir).LastSuccess()
		require.NoError(t, err)
		assert.Equal(t, success, after, "a run whose prune was refused is no full success")
	})
	t.Run("clock skew", func(t *testing.T) {
		e, _, _, dir := setup(t)
		e.now = func() time.Time { return time.Now().Add(-48 * time.Hour) }
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitStale, code)
		assert.Contains(t, lines, "clock skew")
	})
	t.Run("state database damaged", func(t *testing.T) {
		e, _, _, dir := setup(t)
		require.NoError(t, os.WriteFile(folder.At(dir).StateFile(), []byte(strings.Repeat("x", 8192)), 0o600))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "the state database does not open")
	})
	t.Run("album not listed", func(t *testing.T) {
		e, s, u, dir := setup(t)
		a := u.AddAlbum("C")
		a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 10, Seed: 4})
		s.Inject("GET /collections/v2/diff", enteapitest.Repeat(enteapitest.Status(500), 8)...)
		require.Equal(t, exitPartial, first(e.run("backup", dir)))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "albums the last run could not list: 1")
	})
	t.Run("record missing", func(t *testing.T) {
		e, _, _, dir := setup(t)
		require.NoError(t, os.Remove(folder.At(dir).LastRunPath()))
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, lines, "could not record how it went")
		release := holdLock(t, dir)
		defer release()
		code, lines = statusOf(t, e, dir)
		assert.Equal(t, exitStale, code)
		assert.Contains(t, lines, "in progress")
	})
}

// The Problem line carries the reason the last run failed.
func TestStatusProblemNamesTheError(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	s.Inject("GET /collections/v2", enteapitest.Repeat(enteapitest.StatusBody(400, `{"code":"BAD","message":"nope"}`), 8)...)
	require.Equal(t, exitFatal, first(e.run("backup", dir)))
	code, lines := statusOf(t, e, dir)
	assert.Equal(t, exitStale, code)
	assert.Contains(t, lines, "Problem:       the last run ended failed (exit code 1): listing albums: ")
}

func first(code int, _, _ string) int { return code }

// verify --ignore GLOB keeps more names from being extra; the junk
// systems drop into folders never is.
func TestVerifyIgnore(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	for _, name := range []string{".DS_Store", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "A", name), []byte("j"), 0o644))
	}
	code, _, errOut := e.run("verify", dir)
	assert.Equal(t, exitPartial, code)
	assert.Contains(t, errOut, "extra: A/notes.txt")
	assert.NotContains(t, errOut, ".DS_Store")
	code, _, errOut = e.run("verify", "--ignore", "*.txt", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, exitUsage, first(e.run("verify", "--ignore", "[x", dir)))
}

// status --json and verify --json answer an error with a JSON error
// object, never with nothing on stdout.
func TestJSONErrorObjects(t *testing.T) {
	e := newEnv(t)
	missing := filepath.Join(t.TempDir(), "nope")
	for _, cmd := range []string{"status", "verify"} {
		code, out, _ := e.run(cmd, "--json", missing)
		objs := jsonLinesOf(t, out)
		require.Len(t, objs, 1, "%s: %q", cmd, out)
		assert.Equal(t, "error", objs[0]["type"])
		assert.Equal(t, float64(code), objs[0]["exitCode"])
		assert.Contains(t, objs[0]["error"], "nope")
	}
	code, out, _ := e.run("status", "--json", "--offline", t.TempDir())
	assert.Equal(t, exitUnusableDir, code)
	assert.Len(t, jsonLinesOf(t, out), 1)
}

// The bar counts in MiB, as the summary does, and a tick redraws it while
// no byte arrives.
func TestBarSpeaksMiB(t *testing.T) {
	var errb, out strings.Builder
	d := deps{stdout: &out, stderr: &errb, stderrIsTerminal: true}
	p := newPrinter(d, nil, nil)
	p.event(backup.Event{Kind: backup.Planned, Files: 2, Bytes: 3 << 20})
	p.event(backup.Event{Kind: backup.Progress, Bytes: 1 << 20})
	p.bar.tick()
	p.finish(&backup.Summary{Started: true, Bytes: 3 << 20}, exitOK, nil)
	p.bar.tick() // after the end: nothing, and no panic
	assert.Contains(t, errb.String(), "MiB")
	assert.NotContains(t, errb.String(), " MB")
	assert.Contains(t, out.String(), "3.0 MiB")
}

// An interrupted run's error reads "interrupted", never "context canceled".
func TestInterruptedErrorText(t *testing.T) {
	assert.Equal(t, "interrupted", errText(fmt.Errorf("listing: %w", context.Canceled)))
	assert.Nil(t, errText(nil))
	assert.Equal(t, "x", errText(errors.New("x")))
}
