package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// env is a test's environment: its config folder and any other variables.
type env struct {
	t     *testing.T
	vars  map[string]string
	stdin string
	// now, when set, is the clock commands see.
	now             func() time.Time
	healthTimeout   time.Duration
	healthTransport http.RoundTripper
	freeSpace       func(string) (int64, error)
	canWrite        func(string) error
	// terminal makes stderr a terminal (progress bars).
	terminal bool
	// readPassword, when set, is the terminal's no-echo prompt.
	readPassword func() ([]byte, error)
	// transport, when set, carries the API's requests.
	transport http.RoundTripper
	// tweak, when set, changes the deps a command runs with.
	tweak func(*deps)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, vars: map[string]string{"QUAK_CONFIG_DIR": filepath.Join(t.TempDir(), "config")}}
}

func (e *env) run(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	return e.runCtx(context.Background(), args...)
}

// runCtx is run under ctx: cancelling it is Ctrl-C.
func (e *env) runCtx(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	return e.runTee(ctx, nil, args...)
}

// runTee is runCtx, its stderr also copied to tee when set.
func (e *env) runTee(ctx context.Context, tee io.Writer, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	var out bytes.Buffer
	errb := &syncBuffer{}
	var errw io.Writer = errb
	if tee != nil {
		errw = io.MultiWriter(errb, tee)
	}
	d := deps{
		stdin:  strings.NewReader(e.stdin),
		stdout: &out,
		stderr: errw,
		getenv: func(k string) string { return e.vars[k] },
		sleep:  func(context.Context, time.Duration) error { return nil },
		now:    e.now,

		healthTimeout:   e.healthTimeout,
		healthTransport: e.healthTransport,
		freeSpace:       e.freeSpace,
		canWrite:        e.canWrite,

		stderrIsTerminal: e.terminal,
		readPassword:     e.readPassword,
		transport:        e.transport,
	}
	if e.tweak != nil {
		e.tweak(&d)
	}
	code = run(ctx, d, args)
	return code, out.String(), errb.String()
}

// syncBuffer is a bytes.Buffer safe for the goroutines of a run.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (e *env) sessionFile() string { return filepath.Join(e.vars["QUAK_CONFIG_DIR"], "session.json") }

// passwordFile writes password to a private file and returns its path.
func passwordFile(t *testing.T, password string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte(password+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	code, out, _ := newEnv(t).run("--version")
	if code != exitOK || !strings.Contains(out, "quak version") {
		t.Fatalf("code %d, output %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--no-such-flag"}, {"bogus"}, {"whoami", "extra"}} {
		code, _, errOut := newEnv(t).run(args...)
		if code != exitUsage || !strings.Contains(errOut, "quak: error:") {
			t.Fatalf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}

func TestMistypedCommandSuggests(t *testing.T) {
	code, _, errOut := newEnv(t).run("bakup", "/x")
	if code != exitUsage || !strings.Contains(errOut, "quak: error: unknown command \"bakup\"\nquak: hint: did you mean backup?\n") {
		t.Fatalf("code %d, %q", code, errOut)
	}
	code, _, errOut = newEnv(t).run("statsu")
	if code != exitUsage || !strings.Contains(errOut, "did you mean status?") {
		t.Fatalf("code %d, %q", code, errOut)
	}
}

func fakeServer(t *testing.T, o enteapitest.UserOptions) (*enteapitest.Server, *enteapitest.User) {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	return s, s.AddUser("alice@example.org", "correct horse battery staple", o)
}

func TestLoginWhoamiLogout(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	e.vars["QUAK_ENDPOINT"] = s.URL()
	e.vars["QUAK_PASSWORD_FILE"] = passwordFile(t, u.Password, 0o600)

	code, out, errOut := e.run("login", "--email", u.Email)
	if code != exitOK {
		t.Fatalf("login: code %d\n%s%s", code, out, errOut)
	}
	fi, err := os.Stat(e.sessionFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file: %v, mode %v", err, fi.Mode())
	}
	tokensAfterLogin := u.TokenCount()

	code, out, _ = e.run("whoami")
	if code != exitOK || !strings.Contains(out, u.Email) || !strings.Contains(out, s.URL()) || !strings.Contains(out, "valid") {
		t.Fatalf("whoami: code %d, %q", code, out)
	}

	code, out, _ = e.run("logout")
	if code != exitOK || !strings.Contains(out, "Logged out") {
		t.Fatalf("logout: code %d, %q", code, out)
	}
	if u.TokenCount() != tokensAfterLogin-1 {
		t.Fatalf("the server still has the token: %d tokens", u.TokenCount())
	}
	if _, err := os.Stat(e.sessionFile()); !os.IsNotExist(err) {
		t.Fatalf("session file still there: %v", err)
	}
	code, _, errOut = e.run("whoami")
	if code != exitLogin || !strings.Contains(errOut, "quak login") {
		t.Fatalf("whoami after logout: code %d, %q", code, errOut)
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	e.vars["QUAK_PASSWORD_FILE"] = passwordFile(t, u.Password, 0o600)
	var all strings.Builder
	for _, args := range [][]string{{"login", "--email", u.Email, "--endpoint", s.URL()}, {"whoami"}} {
		_, out, errOut := e.run(args...)
		all.WriteString(out + errOut)
	}
	b, err := os.ReadFile(e.sessionFile())
	if err != nil {
		t.Fatal(err)
	}
	tok := between(string(b), `"token": "`, `"`)
	if tok == "" {
		t.Fatal("no token in the session file")
	}
	for _, secret := range []string{tok, u.Password} {
		if strings.Contains(all.String(), secret) {
			t.Fatalf("output shows a secret:\n%s", all.String())
		}
	}
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}

func TestWrongPasswordLeavesNoSession(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, "nope", 0o600))
	if code != exitFatal || !strings.Contains(errOut, "wrong password") {
		t.Fatalf("code %d, %q", code, errOut)
	}
	if _, err := os.Stat(e.sessionFile()); !os.IsNotExist(err) {
		t.Fatal("a failed login wrote a session")
	}
}

// A password file group or others can read is refused, as the session
// file is; one readable by its owner alone is taken.
func TestAPasswordFileOthersCanReadIsRefused(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, mode))
		if code != exitFatal || !strings.Contains(errOut, "chmod 600") || strings.Contains(errOut, u.Password) {
			t.Fatalf("mode %04o: code %d, %q", mode, code, errOut)
		}
	}
	if code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o400)); code != exitOK {
		t.Fatalf("mode 0400: code %d, %q", code, errOut)
	}
}

func TestNoTerminalAndNoPasswordFile(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	code, _, errOut := newEnv(t).run("login", "--email", u.Email, "--endpoint", s.URL())
	if code != exitFatal || !strings.Contains(errOut, "--password-file") {
		t.Fatalf("code %d, %q", code, errOut)
	}
}

func TestEmailCodeAndTOTPFromStdin(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{NoSRP: true, TOTP: "135790"})
	e := newEnv(t)
	e.stdin = u.Email + "\n" + enteapitest.OTT + "\n135790\n"
	code, out, errOut := e.run("login", "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600))
	if code != exitOK {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	for _, q := range []string{"Email:", "emailed", "authenticator"} {
		if !strings.Contains(errOut, q) {
			t.Fatalf("never asked %q: %q", q, errOut)
		}
	}
}

func TestInsecureSessionFileRefused(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	if code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600)); code != exitOK {
		t.Fatal(errOut)
	}
	if err := os.Chmod(e.sessionFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := e.run("whoami")
	if code != exitFatal || !strings.Contains(errOut, "chmod 600") {
		t.Fatalf("code %d, %q", code, errOut)
	}
}

func TestRejectedSessionExits3(t *testing.T) {
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	if code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600)); code != exitOK {
		t.Fatal(errOut)
	}
	s.Inject("GET /users/session-validity/v2", enteapitest.StatusBody(401, `{"error":"token expired"}`))
	code, _, errOut := e.run("whoami")
	if code != exitLogin || !strings.Contains(errOut, "quak login") {
		t.Fatalf("code %d, %q", code, errOut)
	}
}
