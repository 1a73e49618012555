package cmd

import (
	"strings"
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
