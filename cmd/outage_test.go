package cmd

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// tcpProxy forwards a fixed loopback address to a server; stopping it
// makes that address refuse connections, as a stopped server does.
type tcpProxy struct {
	t      *testing.T
	addr   string
	to     string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	closed bool
}

func newTCPProxy(t *testing.T, to string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{t: t, to: to, conns: map[net.Conn]bool{}}
	p.start("127.0.0.1:0")
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) url() string { return "http://" + p.addr }

func (p *tcpProxy) start(addr string) {
	ln, err := net.Listen("tcp", addr)
	require.NoError(p.t, err)
	p.mu.Lock()
	p.ln, p.addr, p.closed = ln, ln.Addr().String(), false
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
}

func (p *tcpProxy) restart() { p.start(p.addr) }

func (p *tcpProxy) serve(c net.Conn) {
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// live is how many connections through the proxy are open.
func (p *tcpProxy) live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// stop closes the listener and every connection through it.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// loggedInBehindProxy starts a fake server and a TCP proxy in front of it
// (stopping the proxy is the server going away) and logs in through it.
func loggedInBehindProxy(t *testing.T) (*enteapitest.Server, *enteapitest.User, *tcpProxy, *env) {
	t.Helper()
	s, u := fakeServer(t, enteapitest.UserOptions{})
	proxy := newTCPProxy(t, strings.TrimPrefix(s.URL(), "http://"))
	e := newEnv(t)
	if code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", proxy.url(), "--password-file", passwordFile(t, u.Password, 0o600)); code != exitOK {
		t.Fatal(errOut)
	}
	return s, u, proxy, e
}

// requireRecordedTempFail checks that the run just ended left exit 75 in
// last-run.json and that status is not healthy after it.
func requireRecordedTempFail(t *testing.T, e *env, dir string) {
	t.Helper()
	last, err := folder.At(dir).LastRun()
	require.NoError(t, err)
	assert.Equal(t, exitTempFail, last.ExitCode)
	scode, lines := statusOf(t, e, dir)
	assert.NotEqual(t, exitOK, scode, "status after a run the server left half-way: %s", lines)
}

// The server goes away in the middle of a run: quak stops with exit 75
// and one message naming the cause, records no file it did not try as
// failed, and the next run, with the server back, completes the backup.
func TestServerGoneExits75AndNextRunCompletes(t *testing.T) {
	s, u, proxy, e := loggedInBehindProxy(t)
	dir := t.TempDir()
	a := u.AddAlbum("Trip")
	var files []*enteapitest.File
	for i := range 12 {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: string(rune('a'+i)) + ".jpg", Size: 200, Seed: byte(i + 1)}))
	}
	var once sync.Once
	n := 0
	s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if strings.HasPrefix(route, "GET /store/") {
			if n++; n == 3 {
				once.Do(proxy.stop) // the API goes away; this object still arrives
			}
		}
		return enteapitest.Fault{}, false
	})
	code, out, errOut := e.run("backup", "--concurrency", "1", dir)
	assert.Equal(t, exitTempFail, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "quak: error:"), errOut)
	assert.Equal(t, 2, strings.Count(errOut, "\n"), "the error and its hint: %q", errOut)
	assert.Contains(t, errOut, "quak: hint: try again later; the next run carries on")
	assert.Contains(t, errOut, "cannot be reached")
	assert.Contains(t, errOut, "connection refused")
	assert.NotContains(t, errOut, "failed:", "no file is reported failed")
	assert.NotContains(t, errOut, "retrying", "retries are for --verbose")
	assert.Contains(t, out, "0 failed")
	last, err := folder.At(dir).LastRun()
	require.NoError(t, err)
	assert.Equal(t, exitTempFail, last.ExitCode)
	require.NotNil(t, last.Error)
	assert.Contains(t, *last.Error, "cannot be reached")
	assert.Empty(t, last.Failures)
	assert.True(t, strings.HasPrefix(out, "FAILED (exit code 75): "), out)
	_, lines := statusOf(t, e, dir)
	assert.Contains(t, lines, "Problem:       the last run ended failed (exit code 75): the server cannot be reached")

	proxy.restart()
	code, _, errOut = e.run("backup", "--concurrency", "1", dir)
	require.Equal(t, exitOK, code, errOut)
	for i, f := range files {
		title := string(rune('a'+i)) + ".jpg"
		b, err := os.ReadFile(filepath.Join(dir, "Trip", title))
		require.NoError(t, err)
		assert.Equal(t, f.Plaintext(), b, title)
	}
}
