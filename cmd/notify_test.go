//go:build unix

package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// inbox is a notify URL's endpoint: it keeps every JSON body posted to it
// and answers status (200 when 0).
type inbox struct {
	mu       sync.Mutex
	posts    []map[string]any
	paths    []string
	types    []string
	status   int
	location string // a redirect's target, with status 3xx
}

func (b *inbox) server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		b.mu.Lock()
		b.posts, b.paths, b.types = append(b.posts, m), append(b.paths, r.Method+" "+r.URL.Path), append(b.types, r.Header.Get("Content-Type"))
		status, loc := b.status, b.location
		b.mu.Unlock()
		if loc != "" {
			w.Header().Set("Location", loc)
		}
		if status != 0 {
			w.WriteHeader(status)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (b *inbox) got() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]any{}, b.posts...)
}

// envLog is a notify command that appends its whole environment, each
// variable ended by a NUL, and "--" after it, to a file; records reads it
// back.
type envLog string

func newEnvLog(t *testing.T) envLog {
	t.Helper()
	return envLog(filepath.Join(t.TempDir(), "env.log"))
}

func (l envLog) command() string {
	return "env -0 >> '" + string(l) + "'; printf -- '--\\0' >> '" + string(l) + "'"
}

// records are the environments of the runs so far, as maps.
func (l envLog) records(t *testing.T) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(string(l))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []map[string]string
	cur := map[string]string{}
	for _, line := range strings.Split(string(b), "\x00") {
		if line == "--" {
			out = append(out, cur)
			cur = map[string]string{}
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			cur[k] = v
		}
	}
	return out
}

// After a backup, the notify command runs with the outcome in its
// environment, and the notify URL gets the same outcome as JSON.
func TestNotifyCommandAndURLAfterABackup(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 100, Seed: 1})
	log := newEnvLog(t)
	var box inbox
	srv := box.server(t)
	code, out, errOut := e.run("backup", "--notify-command", log.command(), "--notify-url", srv.URL+"/hook/abc", dir)
	require.Equal(t, exitOK, code, out+errOut)

	recs := log.records(t)
	require.Len(t, recs, 1)
	r := recs[0]
	assert.Equal(t, "success", r["QUAK_EVENT"])
	assert.Equal(t, "ok", r["QUAK_OUTCOME"])
	assert.Equal(t, "0", r["QUAK_EXIT_CODE"])
	assert.Equal(t, "1", r["QUAK_NEW"])
	assert.Equal(t, "0", r["QUAK_FAILED"])
	assert.Equal(t, "0", r["QUAK_DELETED"])
	assert.Equal(t, "100", r["QUAK_BYTES"])
	assert.Equal(t, dir, r["QUAK_FOLDER"])
	assert.Equal(t, u.Email, r["QUAK_ACCOUNT"])
	assert.NotEmpty(t, r["QUAK_ENDPOINT"])
	assert.Equal(t, "", r["QUAK_ERROR"])
	assert.Equal(t, "", r["QUAK_FOLDERS"])
	assert.True(t, strings.HasPrefix(r["QUAK_SUMMARY"], "1 new, "), r["QUAK_SUMMARY"])
	assert.Contains(t, r["QUAK_TITLE"], "backup of "+dir+" ok")

	posts := box.got()
	require.Len(t, posts, 1)
	p := posts[0]
	assert.Equal(t, "POST /hook/abc", box.paths[0])
	assert.Equal(t, "application/json", box.types[0])
	assert.Equal(t, "success", p["event"])
	assert.Equal(t, "ok", p["outcome"])
	assert.EqualValues(t, 0, p["exitCode"])
	assert.Nil(t, p["error"])
	assert.EqualValues(t, 1, p["counts"].(map[string]any)["new"])
	assert.EqualValues(t, 100, p["bytes"])
	assert.Equal(t, dir, p["folder"])
	assert.Equal(t, u.Email, p["account"])
	assert.Equal(t, r["QUAK_SUMMARY"], p["summary"])
	assert.Equal(t, r["QUAK_TITLE"], p["title"])
	assert.Equal(t, p["message"], p["body"])
	assert.Equal(t, "success", p["type"])
	assert.NotContains(t, p, "folders")
	_, err := time.Parse(time.RFC3339, p["time"].(string))
	assert.NoError(t, err)
}

// The notify command's environment holds none of quak's secrets: not the
// session's token, not the health-check or notify URL (the command may
// pass its environment on).
func TestNotifyCommandGetsNoSecret(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	var pings pingLog
	ping := pings.server(t)
	var box inbox
	hook := box.server(t)
	e.vars["QUAK_HEALTHCHECK_URL"] = ping.URL + "/ping/secret-ping-uuid"
	e.vars["QUAK_NOTIFY_URL"] = hook.URL + "/hook/secret-hook-token"
	e.tweak = func(d *deps) {
		d.environ = func() []string {
			return []string{"PATH=" + os.Getenv("PATH"), "KEEP=me", "QUAK_HEALTHCHECK_URL=" + e.vars["QUAK_HEALTHCHECK_URL"],
				"QUAK_NOTIFY_URL=" + e.vars["QUAK_NOTIFY_URL"], "QUAK_NEW=stale"}
		}
	}
	log := newEnvLog(t)
	code, out, errOut := e.run("backup", "--notify-command", log.command(), dir)
	require.Equal(t, exitOK, code, out+errOut)
	b, err := os.ReadFile(string(log))
	require.NoError(t, err)
	for _, secret := range []string{sessionToken(t, e), "secret-ping-uuid", "secret-hook-token"} {
		assert.NotContains(t, string(b), secret)
	}
	r := log.records(t)[0]
	assert.Equal(t, "me", r["KEEP"], "the rest of the environment is passed on")
	assert.Equal(t, "1", r["QUAK_NEW"], "the outcome's own variable, not the inherited one")
	require.Len(t, box.got(), 1, "the URL from the environment was posted to")
}

// --notify-start notifies the start first, then how the run ended.
func TestNotifyStart(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	log := newEnvLog(t)
	var box inbox
	srv := box.server(t)
	code, out, errOut := e.run("backup", "--notify-start", "--notify-command", log.command(), "--notify-url", srv.URL, dir)
	require.Equal(t, exitOK, code, out+errOut)
	recs := log.records(t)
	require.Len(t, recs, 2)
	assert.Equal(t, []string{"start", "success"}, []string{recs[0]["QUAK_EVENT"], recs[1]["QUAK_EVENT"]})
	assert.Equal(t, "", recs[0]["QUAK_EXIT_CODE"])
	assert.Equal(t, dir, recs[0]["QUAK_FOLDER"])
	assert.Contains(t, recs[0]["QUAK_TITLE"], "started")
	posts := box.got()
	require.Len(t, posts, 2)
	assert.Equal(t, "start", posts[0]["event"])
	assert.Nil(t, posts[0]["exitCode"])
	assert.Equal(t, "info", posts[0]["type"])
	assert.Equal(t, "success", posts[1]["event"])

	// Without --notify-start, only the end.
	log2 := newEnvLog(t)
	code, _, _ = e.run("backup", "--notify-command", log2.command(), dir)
	require.Equal(t, exitOK, code)
	require.Len(t, log2.records(t), 1)
}

// A run that fails, and one refused before it started, notify a failure
// with their code and error.
func TestNotifyFailures(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Size: 10, Seed: 1})
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(30), 5)...)
	log := newEnvLog(t)
	var box inbox
	srv := box.server(t)
	code, _, _ := e.run("backup", "--notify-command", log.command(), "--notify-url", srv.URL, dir)
	require.Equal(t, exitPartial, code)
	code, _, _ = e.run("backup", "--notify-command", log.command(), "--notify-url", srv.URL, filepath.Join(dir, "missing"))
	require.Equal(t, exitUnusableDir, code)

	recs := log.records(t)
	require.Len(t, recs, 2)
	partial, refused := recs[0], recs[1]
	assert.Equal(t, "failure", partial["QUAK_EVENT"])
	assert.Equal(t, "partial", partial["QUAK_OUTCOME"])
	assert.Equal(t, "2", partial["QUAK_EXIT_CODE"])
	assert.Equal(t, "1", partial["QUAK_NEW"])
	assert.Equal(t, "1", partial["QUAK_FAILED"])
	assert.True(t, strings.HasPrefix(partial["QUAK_SUMMARY"], "INCOMPLETE (exit code 2): "), partial["QUAK_SUMMARY"])
	assert.Contains(t, partial["QUAK_ERROR"], "1 file could not be backed up")
	assert.Contains(t, partial["QUAK_TITLE"], "PARTIAL (exit code 2)")
	assert.Equal(t, "failure", refused["QUAK_EVENT"])
	assert.Equal(t, "refused", refused["QUAK_OUTCOME"])
	assert.Equal(t, "5", refused["QUAK_EXIT_CODE"])
	assert.True(t, strings.HasPrefix(refused["QUAK_SUMMARY"], "REFUSED before it started: backup folder"), refused["QUAK_SUMMARY"])
	assert.Equal(t, "", refused["QUAK_ACCOUNT"], "a folder never backed up has no account yet")

	posts := box.got()
	require.Len(t, posts, 2)
	assert.Equal(t, "warning", posts[0]["type"])
	assert.EqualValues(t, 2, posts[0]["exitCode"])
	assert.Contains(t, posts[0]["message"], "\nerror: 1 file could not be backed up")
	assert.Equal(t, "failure", posts[1]["type"])
	assert.Equal(t, "refused", posts[1]["outcome"])
}

// A notify command that fails, or a notify URL that does, is reported
// with the end of its output, and the backup ends as it would have.
func TestNotifyFailureNeverFailsTheBackup(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	box := inbox{status: http.StatusInternalServerError}
	srv := box.server(t)
	code, out, errOut := e.run("backup", "--notify-command", "echo first; echo 'no route to ntfy' >&2; exit 3",
		"--notify-url", srv.URL+"/hook/secret-token", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, "quak: notify command (event success) failed: exit status 3: no route to ntfy\n")
	assert.Contains(t, errOut, "quak: notify URL (event success) failed: HTTP 500\n")
	assert.Len(t, box.got(), 2, "one retry")
	assert.NotContains(t, errOut, "secret-token")
	assert.Contains(t, out, "1 new")
}

// A notify URL that cannot be reached is reported without the URL, which
// may hold a token; a redirect is not followed.
func TestNotifyURLKeepsItsSecret(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	ln := httptest.NewServer(http.NotFoundHandler())
	dead := ln.URL + "/hook/secret-token"
	ln.Close()
	code, out, errOut := e.run("backup", "--notify-url", dead, dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, "quak: notify URL (event success) failed: ")
	assert.NotContains(t, errOut, "secret-token")

	var target inbox
	to := target.server(t)
	box := inbox{status: http.StatusFound, location: to.URL + "/elsewhere"}
	srv := box.server(t)
	code, _, errOut = e.run("backup", "--notify-url", srv.URL+"/hook", dir)
	require.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "failed: HTTP 302")
	assert.Empty(t, target.got(), "the redirect was followed")
}

// A notify URL that is no http(s) URL, or a file others can read, is
// refused before the run, without quoting the URL.
func TestNotifyURLRefusals(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	code, _, errOut := e.run("backup", "--notify-url", "ftp://host/secret-token", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--notify-url must be an http(s) URL")
	assert.NotContains(t, errOut, "secret-token")

	open := filepath.Join(t.TempDir(), "url")
	require.NoError(t, os.WriteFile(open, []byte("https://h/secret-token\n"), 0o644))
	require.NoError(t, os.Chmod(open, 0o644))
	code, _, errOut = e.run("backup", "--notify-url-file", open, dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--notify-url-file")
	assert.NotContains(t, errOut, "secret-token")

	var box inbox
	srv := box.server(t)
	private := filepath.Join(t.TempDir(), "url")
	require.NoError(t, os.WriteFile(private, []byte(srv.URL+"/from-file\n"), 0o600))
	e.vars["QUAK_NOTIFY_URL_FILE"] = private
	e.vars["QUAK_NOTIFY_URL"] = "https://not.used.invalid/"
	code, _, errOut = e.run("backup", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []string{"POST /from-file"}, box.paths, "the file wins over $QUAK_NOTIFY_URL")
}

// A dry run notifies nothing, as it pings nothing.
func TestNotifyNotOnDryRun(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	log := newEnvLog(t)
	e.vars["QUAK_NOTIFY_COMMAND"] = log.command()
	code, _, errOut := e.run("backup", "--dry-run", "--notify-start", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, log.records(t))
	code, _, errOut = e.run("backup", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Len(t, log.records(t), 1, "$QUAK_NOTIFY_COMMAND is the command")
}

// A notify command that outlives its time limit is stopped, with what it
// started, and reported; the backup is not held up further.
func TestNotifyCommandTimeLimit(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	e.tweak = func(d *deps) { d.notifyTimeout = 300 * time.Millisecond }
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The shell starts a child that would sleep long past the limit and
	// waits for it.
	code, out, errOut := e.run("backup", "--notify-command", "sleep 60 & echo $! > '"+pidFile+"'; wait", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, "quak: notify command (event success) failed: stopped after its time limit of 300ms")
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	// The kill is delivered at once; the child's end follows.
	waitFor(t, "the command's child to end", func() bool { return !alive(pid) })
}

// alive reports whether pid is a process that has not ended (a zombie
// waiting for its parent has ended).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// An --all run notifies once, for every folder, as it pings once.
func TestNotifyAllOnce(t *testing.T) {
	f := newFamily(t, "alice", "bob")
	f.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	f.record(t, "alice")
	f.record(t, "bob")
	require.NoError(t, os.RemoveAll(f.dirs["bob"]))
	log := newEnvLog(t)
	var box inbox
	srv := box.server(t)
	code, _, _ := f.e.run("backup", "--all", "--notify-start", "--notify-command", log.command(), "--notify-url", srv.URL)
	require.Equal(t, exitUnusableDir, code)
	recs := log.records(t)
	require.Len(t, recs, 2)
	assert.Equal(t, "start", recs[0]["QUAK_EVENT"])
	assert.Contains(t, recs[0]["QUAK_TITLE"], "backup of every folder started")
	assert.Equal(t, "", recs[0]["QUAK_EXIT_CODE"])
	assert.Equal(t, "", recs[0]["QUAK_FOLDERS"])
	end := recs[1]
	assert.Equal(t, "failure", end["QUAK_EVENT"])
	assert.Equal(t, "5", end["QUAK_EXIT_CODE"])
	assert.Equal(t, "2", end["QUAK_FOLDERS"])
	assert.Equal(t, "", end["QUAK_FOLDER"])
	assert.Contains(t, end["QUAK_SUMMARY"], "Total for 2 of 2 folders")
	assert.Contains(t, end["QUAK_MESSAGE"], "bob@example.org, "+f.dirs["bob"]+": exit code 5")
	assert.Contains(t, end["QUAK_TITLE"], "backup of 2 folders FAILED (exit code 5)")
	posts := box.got()
	require.Len(t, posts, 2)
	assert.Nil(t, posts[0]["exitCode"])
	assert.NotContains(t, posts[0], "folders")
	folders := posts[1]["folders"].([]any)
	require.Len(t, folders, 2)
	assert.Equal(t, map[string]any{"account": "alice@example.org", "folder": f.dirs["alice"], "exitCode": 0.0, "error": nil}, folders[0])
	assert.EqualValues(t, 5, folders[1].(map[string]any)["exitCode"])
}

// A run stopped by Ctrl-C still notifies, as interrupted.
func TestNotifyInterruptedRun(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	big := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 7})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, big.ID))
	var box inbox
	srv := box.server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.Stalled
		cancel()
	}()
	code, _, errOut := e.runCtx(ctx, "backup", "--streams", ranges, "--notify-url", srv.URL, dir)
	require.Equal(t, exitInterrupt, code, errOut)
	posts := box.got()
	require.Len(t, posts, 1, errOut)
	assert.Equal(t, "failure", posts[0]["event"])
	assert.Equal(t, "interrupted", posts[0]["outcome"])
	assert.EqualValues(t, exitInterrupt, posts[0]["exitCode"])
	assert.Equal(t, "interrupted", posts[0]["error"])
}

// A notification of a run that ended has its whole time limit; one of a
// run that was stopped, at most 3 seconds: quak is being stopped.
func TestNotifyTimeLimits(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	dead := &deadHealth{}
	e.healthTransport = dead
	e.tweak = func(d *deps) { d.notifyTimeout = time.Hour }
	code, _, errOut := e.run("backup", "--notify-url", "https://notify.invalid/hook", dir)
	require.Equal(t, exitOK, code, errOut)
	require.NotEmpty(t, dead.deadlines)
	for _, d := range dead.deadlines {
		assert.Greater(t, d, 59*time.Minute, "a run that ended")
	}

	big := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 7})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, big.ID))
	dead.deadlines = nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.Stalled
		cancel()
	}()
	code, _, errOut = e.runCtx(ctx, "backup", "--streams", ranges, "--notify-url", "https://notify.invalid/hook", dir)
	require.Equal(t, exitInterrupt, code, errOut)
	require.NotEmpty(t, dead.deadlines)
	for _, d := range dead.deadlines {
		assert.True(t, d > 0 && d <= notifyStopTimeout, "a stopped run's notification may take %s", d)
	}
	assert.Contains(t, errOut, "quak: notify URL (event failure) failed: ")
}

// Only a 2xx answer is a notification received.
func TestNotifyURLAnswerBelow300(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	box := inbox{status: http.StatusMultipleChoices}
	srv := box.server(t)
	code, _, errOut := e.run("backup", "--notify-url", srv.URL, dir)
	require.Equal(t, exitOK, code)
	assert.Contains(t, errOut, "failed: HTTP 300")
	box2 := inbox{status: http.StatusNoContent}
	srv2 := box2.server(t)
	code, _, errOut = e.run("backup", "--notify-url", srv2.URL, dir)
	require.Equal(t, exitOK, code)
	assert.NotContains(t, errOut, "notify URL")
}

// hangingHook answers every notification at once but those of the events
// in hang, which it holds until the request is given up; each event is
// sent on arrived as it comes.
func hangingHook(t *testing.T, hang ...string) (*httptest.Server, chan string) {
	t.Helper()
	arrived := make(chan string, 10)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		ev, _ := m["event"].(string)
		arrived <- ev
		if slices.Contains(hang, ev) {
			select {
			case <-r.Context().Done():
			case <-release: // the test ended (failed) first
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv, arrived
}

// runUntilStopped runs a backup, cancels its context when the hook gets
// the event stop, and fails the test if the run has not returned in
// seconds; it returns the run's stderr and the events the hook got.
func runUntilStopped(t *testing.T, e *env, arrived chan string, stop string, args ...string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code   int
		errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, _, errOut := e.runCtx(ctx, args...)
		done <- result{code, errOut}
	}()
	timeout := time.After(20 * time.Second)
	var events []string
	for {
		select {
		case ev := <-arrived:
			events = append(events, ev)
			if ev == stop {
				cancel()
			}
		case r := <-done:
			for len(arrived) > 0 {
				events = append(events, <-arrived)
			}
			return r.errOut, events
		case <-timeout:
			t.Fatal("the stop waited for the notification")
		}
	}
}

// A stop during a notification cuts it short: quak exits within the stop's
// time limit, not the notification's.
func TestNotifyStopCutsTheNotificationShort(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	e.tweak = func(d *deps) { d.notifyTimeout, d.notifyStopTimeout = time.Hour, time.Nanosecond }
	hook, arrived := hangingHook(t, eventSuccess)
	errOut, events := runUntilStopped(t, e, arrived, eventSuccess, "backup", "--notify-url", hook.URL, dir)
	assert.Equal(t, []string{eventSuccess}, events)
	assert.Contains(t, errOut, "quak: notify URL (event success) failed: ")
}

// A stop while the start's notification hangs ends it at once, and the
// run's end is still told, within the stop's time limit.
func TestNotifyStopEndsTheStartAndStillTellsTheEnd(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	e.tweak = func(d *deps) { d.notifyTimeout = time.Hour }
	hook, arrived := hangingHook(t, eventStart)
	errOut, events := runUntilStopped(t, e, arrived, eventStart, "backup", "--notify-start", "--notify-url", hook.URL, dir)
	assert.Contains(t, errOut, "quak: notify URL (event start) failed: ")
	require.Len(t, events, 2, "the start, then the run's end")
	assert.Equal(t, eventStart, events[0])
	assert.NotEqual(t, eventStart, events[1])
}
