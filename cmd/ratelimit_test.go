package cmd

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Each of museum's login limits is named, with how long to wait: museum
// sends no Retry-After.
func TestLoginRateLimitsSayWhichAndHowLong(t *testing.T) {
	t.Run("unverified sessions: an hour", func(t *testing.T) {
		s, u := fakeServer(t, enteapitest.UserOptions{})
		e := newEnv(t)
		wrong := passwordFile(t, "nope", 0o600)
		for range 10 {
			code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", wrong)
			if !strings.Contains(errOut, "wrong password") {
				t.Fatalf("code %d, %s", code, errOut)
			}
		}
		code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600))
		assert.Equal(t, exitFatal, code)
		assert.Contains(t, errOut, "TOO_MANY_UNVERIFIED_SESSIONS")
		assert.Contains(t, errOut, "wait an hour")
		assert.NotContains(t, errOut, "a minute")
	})
	t.Run("per address: a minute", func(t *testing.T) {
		s, u := fakeServer(t, enteapitest.UserOptions{})
		s.Inject("POST /users/srp/create-session", enteapitest.RetryAfter(429, ""))
		e := newEnv(t)
		_, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600))
		assert.Contains(t, errOut, "10 login requests a minute from one address: wait a minute")
	})
	t.Run("emailed codes: an hour", func(t *testing.T) {
		s, u := fakeServer(t, enteapitest.UserOptions{NoSRP: true})
		s.Inject("POST /users/verify-email", enteapitest.Status(429))
		e := newEnv(t)
		e.stdin = u.Email + "\n" + enteapitest.OTT + "\n"
		_, _, errOut := e.run("login", "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600))
		assert.Contains(t, errOut, "emailed codes or wrong codes for this email: wait an hour")
	})
	t.Run("two-factor codes", func(t *testing.T) {
		s, u := fakeServer(t, enteapitest.UserOptions{NoSRP: true, TOTP: "135790"})
		s.Inject("POST /users/two-factor/verify", enteapitest.Status(429))
		e := newEnv(t)
		e.stdin = u.Email + "\n" + enteapitest.OTT + "\n135790\n"
		_, _, errOut := e.run("login", "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600))
		assert.Contains(t, errOut, "too many wrong two-factor codes")
	})
}

// Logging in again after a session expired, or after logout with a
// backup folder recorded, goes to the server they recorded, not Ente's.
func TestLoginAgainReusesTheRecordedEndpoint(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	u.RevokeSessions()
	pw := passwordFile(t, u.Password, 0o600)
	code, out, errOut := e.run("login", "--email", u.Email, "--password-file", pw)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Logged in as "+u.Email+" on "+s.URL())
	assert.Contains(t, errOut, "logging in on "+s.URL())

	assert.Equal(t, exitOK, first(e.run("backup", "--init", "--account", u.Email, dir)))
	assert.Equal(t, exitOK, first(e.run("logout", "--account", u.Email)))
	code, out, errOut = e.run("login", "--email", u.Email, "--password-file", pw)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "on "+s.URL())
}

// signalOn closes ch the first time its writer sees want.
type signalOn struct {
	mu   sync.Mutex
	want string
	seen strings.Builder
	ch   chan struct{}
}

func (s *signalOn) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen.Write(b)
	if s.ch != nil && strings.Contains(s.seen.String(), s.want) {
		close(s.ch)
		s.ch = nil
	}
	return len(b), nil
}

// Ctrl-C at the password prompt ends login at once, without waiting for
// Enter, and puts the terminal back.
func TestCtrlCAtThePasswordPrompt(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	asked := make(chan struct{})
	stderr := &signalOn{want: "Password: ", ch: asked}
	never := make(chan struct{})
	defer close(never)
	restored := 0
	d := deps{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(k string) string { return e.vars[k] },
		readPassword: func() ([]byte, error) { <-never; return nil, io.EOF },
		saveTerminal: func() func() { return func() { restored++ } }}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-asked; cancel() }()
	code := run(ctx, d, []string{"login", "--email", u.Email, "--endpoint", s.URL()})
	assert.Equal(t, exitInterrupt, code, stderr.seen.String())
	assert.Equal(t, 1, restored)
}
