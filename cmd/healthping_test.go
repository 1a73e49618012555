package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// pingLog is a health-check endpoint that records what it hears.
type pingLog struct {
	mu     sync.Mutex
	pings  []string
	bodies []string
	leaks  int
}

func (p *pingLog) server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.pings = append(p.pings, r.Method+" "+r.URL.Path)
		p.bodies = append(p.bodies, string(b))
		if r.Header.Get("X-Auth-Token") != "" || r.URL.Query().Has("token") {
			p.leaks++
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHealthPings(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	var log pingLog
	srv := log.server(t)

	if code, _, _ := e.run("backup", "--healthcheck-url", srv.URL+"/ping/abc", dir); code != 0 {
		t.Fatal("backup failed")
	}
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(30), 5)...)
	e.vars["QUAK_HEALTHCHECK_URL"] = srv.URL + "/ping/abc"
	if code, _, _ := e.run("backup", dir); code != 2 {
		t.Fatal("expected a partial run")
	}
	if code, _, _ := e.run("backup", filepath.Join(dir, "missing")); code != 5 {
		t.Fatal("expected a refused run")
	}
	want := []string{"GET /ping/abc/start", "POST /ping/abc", "GET /ping/abc/start", "POST /ping/abc/fail", "GET /ping/abc/start", "POST /ping/abc/fail"}
	if strings.Join(log.pings, "|") != strings.Join(want, "|") {
		t.Fatalf("pings %v, want %v", log.pings, want)
	}
	if !strings.HasPrefix(log.bodies[1], "exit code 0\n1 new") || !strings.HasPrefix(log.bodies[3], "exit code 2\nINCOMPLETE (exit code 2): ") ||
		!strings.Contains(log.bodies[3], "\nerror: 1 file could not be backed up") ||
		!strings.HasPrefix(log.bodies[5], "exit code 5\nREFUSED before it started: backup folder") {
		t.Fatalf("bodies %q", log.bodies)
	}
	tok := sessionToken(t, e)
	for _, b := range log.bodies {
		if strings.Contains(b, tok) {
			t.Fatal("a ping carried the token")
		}
	}
	if log.leaks != 0 {
		t.Fatal("a ping carried quak's auth")
	}
}

// deadHealth stands for an endpoint that never answers: it records each
// request's deadline and fails it as that deadline would, at once.
type deadHealth struct {
	mu        sync.Mutex
	deadlines []time.Duration
	at        []time.Time // each request's deadline
}

func (d *deadHealth) RoundTrip(r *http.Request) (*http.Response, error) {
	dl, ok := r.Context().Deadline()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok {
		d.deadlines = append(d.deadlines, -1)
	} else {
		d.deadlines = append(d.deadlines, time.Until(dl))
	}
	d.at = append(d.at, dl)
	return nil, context.DeadlineExceeded
}

// A dead health endpoint changes neither the exit code nor the run beyond
// its timeout: every ping is bounded, tried twice at most, and the backup
// is saved and exits as it would.
func TestDeadHealthEndpointChangesNothing(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	dead := &deadHealth{}
	e.healthTransport = dead
	e.healthTimeout = 3 * time.Second
	code, out, errOut := e.run("backup", "--healthcheck-url", "https://hc.invalid/ping/abc", dir)
	if code != 0 || !strings.Contains(out, "1 new") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if len(dead.deadlines) != 4 {
		t.Fatalf("%d ping requests, want start and end, each tried twice", len(dead.deadlines))
	}
	for _, d := range dead.deadlines {
		if d <= 0 || d > 3*time.Second {
			t.Fatalf("a ping without the timeout as its deadline: %v", d)
		}
	}
	if !dead.at[0].Equal(dead.at[1]) || !dead.at[2].Equal(dead.at[3]) {
		t.Fatalf("a ping's retry must share its deadline, so a hung endpoint costs one timeout: %v", dead.at)
	}
	if !strings.Contains(errOut, "health check ping") || strings.Contains(errOut, "hc.invalid/ping/abc") {
		t.Fatalf("the warning must say what failed without the ping URL: %q", errOut)
	}
}

func TestHealthcheckURLMustBeHTTP(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	if code, _, _ := e.run("backup", "--healthcheck-url", "ftp://x/y", dir); code != 64 {
		t.Fatalf("code %d", code)
	}
}

// The health-check URL can come from a file or the environment, so it
// never shows in ps; a file anyone can read is refused.
func TestHealthURLFromFileOrEnvironment(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	var log pingLog
	srv := log.server(t)
	f := passwordFile(t, srv.URL+"/from-file\n", 0o600)
	if code, _, errOut := e.run("backup", "--healthcheck-url-file", f, dir); code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	e.vars["QUAK_HEALTHCHECK_URL_FILE"] = f
	if code, _, errOut := e.run("backup", dir); code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	delete(e.vars, "QUAK_HEALTHCHECK_URL_FILE")
	e.vars["QUAK_HEALTHCHECK_URL"] = srv.URL + "/from-env"
	if code, _, errOut := e.run("backup", dir); code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	assert.Equal(t, []string{"GET /from-file/start", "POST /from-file", "GET /from-file/start", "POST /from-file",
		"GET /from-env/start", "POST /from-env"}, log.pings)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		open := passwordFile(t, srv.URL+"/x", mode)
		code, _, errOut := e.run("backup", "--healthcheck-url-file", open, dir)
		assert.Equal(t, exitUsage, code, "mode %04o", mode)
		assert.Contains(t, errOut, "readable by others", "mode %04o", mode)
		assert.NotContains(t, errOut, srv.URL)
	}
}
