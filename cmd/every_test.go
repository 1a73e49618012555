//go:build unix

package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// fakeLoop is the clock of a backup --every under test: time stands still
// while a run runs and moves only when the loop pauses, by the pause asked.
// After stopAfter pauses the context is cancelled, as Ctrl-C would.
type fakeLoop struct {
	mu        sync.Mutex
	now       time.Time
	waits     []time.Duration
	stopAfter int
	cancel    context.CancelFunc
	// between, when set, runs at the n-th pause (from 1) before the
	// clock moves: what changes before the next run.
	between func(n int)
}

func newFakeLoop(e *env, stopAfter int) (*fakeLoop, context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	f := &fakeLoop{now: time.Date(2026, time.December, 1, 3, 0, 0, 0, time.UTC), stopAfter: stopAfter, cancel: cancel}
	e.now = f.clock
	e.tweak = func(d *deps) {
		d.pause = f.pause
		d.jitter = func() float64 { return 0 }
	}
	return f, ctx
}

func (f *fakeLoop) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeLoop) pause(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	n := len(f.waits)
	f.mu.Unlock()
	if f.between != nil {
		f.between(n)
	}
	if n >= f.stopAfter {
		f.cancel()
		return ctx.Err()
	}
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
	return nil
}

// backup --every runs at once and then again every DURATION after each
// start; every run pings, records last-run.json and notifies, as a run of
// its own would; Ctrl-C while it waits ends it.
func TestEveryRunsAgainAndAgain(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 100, Seed: 1})
	loop, ctx := newFakeLoop(e, 3)
	var added *enteapitest.File
	loop.between = func(n int) {
		if n == 1 {
			added = a.AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 50, Seed: 2})
		}
	}
	var pings pingLog
	ping := pings.server(t)
	var box inbox
	hook := box.server(t)
	code, out, errOut := e.runCtx(ctx, "backup", "--every", "1h", "--healthcheck-url", ping.URL+"/p", "--notify-url", hook.URL, dir)
	assert.Equal(t, exitInterrupt, code, out+errOut)
	assert.Equal(t, []time.Duration{time.Hour, time.Hour, time.Hour}, loop.waits)
	assert.Equal(t, strings.Repeat("GET /p/start|POST /p|", 3), strings.Join(pings.pings, "|")+"|")
	posts := box.got()
	require.Len(t, posts, 3)
	var news []float64
	for _, p := range posts {
		assert.Equal(t, "success", p["event"])
		news = append(news, p["counts"].(map[string]any)["new"].(float64))
	}
	assert.Equal(t, []float64{1, 1, 0}, news, "the second run saved the file added after the first")
	requireFile(t, filepath.Join(dir, "Trip", "b.jpg"), added.Plaintext())
	last, err := folder.At(dir).LastRun()
	require.NoError(t, err)
	assert.Equal(t, exitOK, last.ExitCode)
	assert.Equal(t, 3, strings.Count(errOut, "quak: next run at "), errOut)
	assert.Contains(t, errOut, "quak: next run at 2026-12-01T04:00:00Z (in 1h0m0s)\n")
	assert.Equal(t, 3, strings.Count(out, " new, "), "one summary a run")
	assert.True(t, strings.HasSuffix(errOut, "quak: interrupted\n"), errOut)
}

// A run that ends 75 (the server cannot be reached) is tried again sooner,
// waiting twice as long each time; the first run that gets through puts
// the loop back on its interval.
func TestEveryRetriesSoonerAfterTempFail(t *testing.T) {
	_, u, proxy, e := loggedInBehindProxy(t)
	dir := t.TempDir()
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 100, Seed: 1})
	loop, ctx := newFakeLoop(e, 5)
	proxy.stop()
	loop.between = func(n int) {
		if n == 3 {
			proxy.restart()
		}
	}
	var pings pingLog
	ping := pings.server(t)
	code, out, errOut := e.runCtx(ctx, "backup", "--every", "6h", "--healthcheck-url", ping.URL+"/p", dir)
	assert.Equal(t, exitInterrupt, code, out+errOut)
	assert.Equal(t, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 6 * time.Hour, 6 * time.Hour}, loop.waits, errOut)
	assert.Equal(t, "GET /p/start|POST /p/fail|GET /p/start|POST /p/fail|GET /p/start|POST /p/fail|GET /p/start|POST /p|GET /p/start|POST /p",
		strings.Join(pings.pings, "|"))
	assert.Equal(t, 3, strings.Count(errOut, ", sooner: the server could not be reached)"), errOut)
	assert.Equal(t, 3, strings.Count(errOut, "quak: error: "), "each failed run says so: %s", errOut)
}

// A failure that lasts (a folder that is gone, a session the server
// rejects) does not end the loop: every run fails loudly (error, ping,
// notification, status), on the usual interval.
func TestEveryKeepsGoingOnLastingFailures(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	loop, ctx := newFakeLoop(e, 4)
	loop.between = func(n int) {
		switch n {
		case 1:
			u.RevokeSessions()
		case 2:
			require.NoError(t, os.RemoveAll(dir))
		}
	}
	var pings pingLog
	ping := pings.server(t)
	log := newEnvLog(t)
	code, out, errOut := e.runCtx(ctx, "backup", "--every", "1h", "--healthcheck-url", ping.URL+"/p", "--notify-command", log.command(), dir)
	assert.Equal(t, exitInterrupt, code, out+errOut)
	assert.Equal(t, []time.Duration{time.Hour, time.Hour, time.Hour, time.Hour}, loop.waits)
	assert.Equal(t, "GET /p/start|POST /p|GET /p/start|POST /p/fail|GET /p/start|POST /p/fail|GET /p/start|POST /p/fail", strings.Join(pings.pings, "|"))
	var codes []string
	for _, r := range log.records(t) {
		codes = append(codes, r["QUAK_EVENT"]+" "+r["QUAK_EXIT_CODE"])
	}
	assert.Equal(t, []string{"success 0", "failure 3", "failure 5", "failure 5"}, codes)
	assert.Equal(t, 1, strings.Count(errOut, "quak: hint: run `quak login --email alice@example.org"), errOut)
	assert.Equal(t, 2, strings.Count(errOut, "does not exist"), errOut)
	assert.Equal(t, 2, strings.Count(errOut, "quak: hint: is the disk mounted? `quak backup --init DIR`"), errOut)
}

// With --quiet, a run that succeeds prints nothing, and one that fails
// prints what it held back, as a run of its own would; nothing piles up
// from one run to the next.
func TestEveryQuiet(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	loop, ctx := newFakeLoop(e, 3)
	loop.between = func(n int) {
		if n == 2 {
			require.NoError(t, os.RemoveAll(dir))
		}
	}
	code, out, errOut := e.runCtx(ctx, "backup", "-q", "--every", "1h", dir)
	assert.Equal(t, exitInterrupt, code)
	assert.Empty(t, out, "the successful runs' summaries")
	assert.Equal(t, 1, strings.Count(errOut, "quak: next run at "), "only the failed run's lines: %s", errOut)
	assert.Contains(t, errOut, "does not exist")
}

// --json adds one next-run object after each run's summary.
func TestEveryJSON(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	_, ctx := newFakeLoop(e, 2)
	code, out, _ := e.runCtx(ctx, "backup", "--json", "--every", "30min", dir)
	assert.Equal(t, exitInterrupt, code)
	var types []string
	var next map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		types = append(types, m["type"].(string))
		if m["type"] == "next-run" {
			next = m
		}
	}
	assert.Equal(t, []string{"planned", "saved", "summary", "next-run", "summary", "next-run"}, types)
	assert.Equal(t, "2026-12-01T04:00:00Z", next["at"], "the second run's: half an hour after it started")
	assert.EqualValues(t, 0, next["exitCode"])
}

// --all --every: each run backs up every folder, pings once and notifies
// once.
func TestEveryAll(t *testing.T) {
	f := newFamily(t, "alice", "bob")
	f.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	f.record(t, "alice")
	f.record(t, "bob")
	loop, ctx := newFakeLoop(f.e, 2)
	bobsFile := (*enteapitest.File)(nil)
	loop.between = func(n int) {
		if n == 1 {
			bobsFile = f.users["bob"].AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10, Seed: 2})
		}
	}
	var pings pingLog
	ping := pings.server(t)
	var box inbox
	hook := box.server(t)
	code, out, errOut := f.e.runCtx(ctx, "backup", "--all", "--every", "1h", "--healthcheck-url", ping.URL+"/p", "--notify-url", hook.URL)
	assert.Equal(t, exitInterrupt, code, out+errOut)
	assert.Equal(t, "GET /p/start|POST /p|GET /p/start|POST /p", strings.Join(pings.pings, "|"))
	posts := box.got()
	require.Len(t, posts, 2)
	for _, p := range posts {
		assert.Len(t, p["folders"], 2)
	}
	assert.EqualValues(t, 1, posts[1]["counts"].(map[string]any)["new"])
	requireFile(t, filepath.Join(f.dirs["bob"], "B", "b.jpg"), bobsFile.Plaintext())
}

// No run leaves a connection open into the wait for the next: the runs
// share one transport, whose idle connections are closed after each.
func TestEveryLeavesNoConnectionOpen(t *testing.T) {
	_, u, proxy, e := loggedInBehindProxy(t)
	dir := t.TempDir()
	a := u.AddAlbum("Trip")
	for i := range 8 {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 100, Seed: byte(i + 1)})
	}
	// The login's client keeps its connection idle until it times out.
	before := proxy.live()
	loop, ctx := newFakeLoop(e, 3)
	loop.between = func(int) {
		waitFor(t, "the run's connections to close", func() bool { return proxy.live() <= before })
	}
	code, out, errOut := e.runCtx(ctx, "backup", "--every", "1h", dir)
	assert.Equal(t, exitInterrupt, code, out+errOut)
	assert.Len(t, loop.waits, 3)
}

// What would fail every run the same way is refused before the first.
func TestEveryRefusesBadFlagsBeforeLooping(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	loop, ctx := newFakeLoop(e, 1)
	for _, args := range [][]string{
		{"--every", "-1h"},
		{"--every", "1h", "--dry-run"},
		{"--every", "1h", "--since", "someday"},
		{"--every", "1h", "--healthcheck-url", "ftp://x/"},
		{"--every", "1h", "--notify-url", "ftp://x/"},
		{"--every", "1h", "--albums", "["},
	} {
		code, _, errOut := e.runCtx(ctx, append(append([]string{"backup"}, args...), dir)...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
	}
	code, _, errOut := e.runCtx(ctx, "backup", "--every", "1h", "--all", "--init")
	assert.Equal(t, exitUsage, code, errOut)
	for _, every := range []string{"0s", "59s", "366d", "300y"} {
		code, _, errOut := e.runCtx(ctx, "backup", "--every", every, dir)
		assert.Equal(t, exitUsage, code, "%s: %s", every, errOut)
		assert.Contains(t, errOut, "--every takes 1 minute (1min) to 1 year (1y)", every)
	}
	assert.Empty(t, loop.waits, "a run started")
}

// --every's bounds are taken: a minute, and a year.
func TestEveryTakesAMinuteToAYear(t *testing.T) {
	for every, wait := range map[string]time.Duration{"1min": time.Minute, "1y": 365 * 24 * time.Hour} {
		e, _, _, dir := loggedIn(t)
		loop, ctx := newFakeLoop(e, 2)
		code, _, errOut := e.runCtx(ctx, "backup", "--every", every, dir)
		assert.Equal(t, exitInterrupt, code, errOut)
		require.NotEmpty(t, loop.waits, every)
		assert.Equal(t, wait, loop.waits[0], every)
	}
}

// SIGTERM ends the loop promptly and cleanly, while it waits and in the
// middle of a run; a run it stopped is recorded as interrupted (143) and
// resumed by the next start.
func TestEveryStopsOnSIGTERM(t *testing.T) {
	bin := buildQuak(t)
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})

	cmd := exec.Command(bin, "backup", "--every", "1h", dir)
	cmd.Env = append(os.Environ(), "QUAK_CONFIG_DIR="+e.vars["QUAK_CONFIG_DIR"])
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	waiting := make(chan struct{})
	var rest strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "quak: next run at ") {
				close(waiting)
				break
			}
		}
		_, _ = io.Copy(&rest, stderr)
	}()
	select {
	case <-waiting:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the first run did not end")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit code below says how it ended
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("quak --every did not stop on SIGTERM while waiting")
	}
	assert.Equal(t, exitTerminated, cmd.ProcessState.ExitCode())
	last, err := folder.At(dir).LastRun()
	require.NoError(t, err)
	assert.Equal(t, exitOK, last.ExitCode, "the wait is no run: the last run's record stands")

	big := a.AddFile(enteapitest.FileSpec{Title: "big.mov", Size: 48 << 20, Seed: 3})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, big.ID))
	code, errOut := signalWhenStalled(t, bin, e, s, syscall.SIGTERM, "backup", "--streams", ranges, "--every", "1h", dir)
	assert.Equal(t, exitTerminated, code, errOut)
	assert.NotContains(t, errOut, "next run at", "no run after the stop")
	last, err = folder.At(dir).LastRun()
	require.NoError(t, err)
	assert.Equal(t, exitTerminated, last.ExitCode)
	assert.Equal(t, folder.OutcomeInterrupted, last.Outcome)
	s.ClearFaults(fmt.Sprintf("GET /store/%d/file-%d", u.ID, big.ID))
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	requireFile(t, filepath.Join(dir, "Trip", "big.mov"), big.Plaintext())
}
