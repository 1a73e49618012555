//go:build unix

package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// stopBound is how long a command stopped at a blocking point may take to
// return before the test calls it hung: only a regression meets it.
const stopBound = enteapitest.GateBound

// stopped is how a command ended after its context was cancelled.
type stopped struct {
	code        int
	out, errOut string
}

// runStopped runs args in-process, waits until blocked says the command is
// held where it waits (the fake server stalling a request, say), cancels
// its context as Ctrl-C or SIGTERM does, and returns how it ended. It
// fails the test if the command does not return within stopBound.
func (e *env) runStopped(t *testing.T, blocked func(), args ...string) stopped {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan stopped, 1)
	go func() {
		var r stopped
		r.code, r.out, r.errOut = e.runTee(ctx, nil, args...)
		done <- r
	}()
	blocked()
	cancel()
	select {
	case r := <-done:
		return r
	case <-time.After(stopBound):
		t.Fatalf("quak %s did not stop when cancelled", strings.Join(args, " "))
	}
	return stopped{}
}

// requireUnlocked fails unless dir's lock and its state are free: the
// stopped run let them go.
func requireUnlocked(t *testing.T, dir string) {
	t.Helper()
	f := folder.At(dir)
	unlock, err := f.Lock()
	require.NoError(t, err, "the lock is still held")
	unlock()
	st, err := f.OpenState()
	require.NoError(t, err, "the state is still held")
	require.NoError(t, st.Close())
}

func stalledBy(t *testing.T, s *enteapitest.Server) func() {
	t.Helper()
	return func() { waitStalled(t, s) }
}

// Each command that can wait (on the server, on a file) ends when it is
// cancelled (Ctrl-C, SIGTERM) while it waits, exits 130, and leaves its
// folder's lock free.
func TestBackupStopsWhenCancelled(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	f := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 8})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID))
	r := e.runStopped(t, stalledBy(t, s), "backup", "--streams", ranges, dir)
	assert.Equal(t, exitInterrupt, r.code, r.errOut)
	assert.True(t, strings.HasPrefix(r.out, "INTERRUPTED (exit code 130): "), r.out)
	requireUnlocked(t, dir)
}

func TestBackupAllStopsWhenCancelled(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	f := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 9})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID))
	r := e.runStopped(t, stalledBy(t, s), "backup", "--streams", ranges, "--all")
	assert.Equal(t, exitInterrupt, r.code, r.errOut)
	requireUnlocked(t, dir)
}

func TestRestoreStopsWhenCancelled(t *testing.T) {
	e, s, dir := restored(t)
	s.InjectUpload(enteapitest.StepPut, enteapitest.StallHeaders())
	r := e.runStopped(t, stalledBy(t, s), "restore", "--account", "bob@example.org", dir)
	assert.Equal(t, exitInterrupt, r.code, r.errOut)
	assert.True(t, strings.HasPrefix(r.out, "INTERRUPTED (exit code 130): "), r.out)
	assert.Contains(t, r.errOut, "quak: interrupted")
	requireUnlocked(t, dir)
}

func TestRestoreFromAStoreJournalStopsWhenCancelled(t *testing.T) {
	e, s, dir := restored(t)
	j := filepath.Join(t.TempDir(), "journals")
	s.InjectUpload(enteapitest.StepPut, enteapitest.StallHeaders())
	r := e.runStopped(t, stalledBy(t, s), "restore", "--account", "bob@example.org", "--journal", j, dir)
	assert.Equal(t, exitInterrupt, r.code, r.errOut)
	requireUnlocked(t, dir)
	jdirs, err := filepath.Glob(filepath.Join(j, "*"))
	require.NoError(t, err)
	require.Len(t, jdirs, 1)
	requireFileUnlocked(t, filepath.Join(jdirs[0], "lock"))
}

// requireFileUnlocked fails unless the lock file at path is free.
func requireFileUnlocked(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	require.NoError(t, tryFlock(f), "the journal's lock is still held")
}

func TestStatusStopsWhenCancelled(t *testing.T) {
	e, s, dir := restored(t)
	s.Inject("GET /users/session-validity/v2", enteapitest.StallHeaders())
	r := e.runStopped(t, stalledBy(t, s), "status", dir)
	assert.Equal(t, exitInterrupt, r.code, r.out+r.errOut)
	requireUnlocked(t, dir)
}

func TestThumbnailHelperStopsWhenCancelled(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	f := lostThumb(t, u.AddAlbum("Trip"), "beach.jpg")
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	s.Inject(fmt.Sprintf("GET /files/preview/%d", f.ID), enteapitest.StallHeaders())
	r := e.runStopped(t, stalledBy(t, s), "helper", "fix-missing-thumbnails", "--from", dir)
	assert.Equal(t, exitInterrupt, r.code, r.out+r.errOut)
	requireUnlocked(t, dir)
}

func TestALinkBackupStopsWhenCancelled(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	big := a.AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 4})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", a.Owner.ID, big.ID), enteapitest.StallHeaders())
	r := e.runStopped(t, stalledBy(t, s), "backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	assert.Equal(t, exitInterrupt, r.code, r.out+r.errOut)
	requireUnlocked(t, dir)
}

// verify waits on nothing but its reads: cancelled as it reports the
// first changed file, it checks no more and ends 130.
func TestVerifyStopsWhenCancelled(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	for i := range 40 {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%02d.jpg", i), Size: 1000, Seed: byte(i)})
	}
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	first := filepath.Join(dir, "Trip", "00.jpg")
	b, err := os.ReadFile(first)
	require.NoError(t, err)
	b[0] ^= 1
	require.NoError(t, os.WriteFile(first, b, 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan stopped, 1)
	go func() {
		var r stopped
		r.code, r.out, r.errOut = e.runTee(ctx, writerFunc(func(p []byte) {
			if strings.Contains(string(p), "quak: changed:") {
				cancel()
			}
		}), "verify", "--concurrency", "1", dir)
		done <- r
	}()
	select {
	case r := <-done:
		assert.Equal(t, exitInterrupt, r.code, r.out+r.errOut)
		assert.NotContains(t, r.out, "40 of 40 files checked", "it went on after it was stopped")
	case <-time.After(stopBound):
		t.Fatal("verify did not stop when cancelled")
	}
	requireUnlocked(t, dir)
}

// writerFunc calls f with each write.
type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) {
	f(p)
	return len(p), nil
}

// SIGTERM to a restore that waits on the server ends the process with
// 143, its lock free: the signal reaches the run as Ctrl-C does.
func TestSIGTERMStopsARestore(t *testing.T) {
	bin := buildQuak(t)
	e, s, dir := restored(t)
	s.InjectUpload(enteapitest.StepPut, enteapitest.StallHeaders())
	code, errOut := signalWhenStalled(t, bin, e, s, syscall.SIGTERM, "restore", "--account", "bob@example.org", dir)
	assert.Equal(t, exitTerminated, code, errOut)
	assert.Contains(t, errOut, "quak: interrupted")
	requireUnlocked(t, dir)
}
