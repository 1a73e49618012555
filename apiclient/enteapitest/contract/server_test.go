package contract_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/errs"
)

// The contract suite: each Contract test is written once against a
// server, and runs against the fake (always) and against museum when
// QUAK_MUSEUM_URL, QUAK_MUSEUM_EMAIL and QUAK_MUSEUM_PASSWORD_FILE name
// one and an account on it that the suite may write to (it makes albums,
// uploads files, replaces thumbnails and makes links). With those set no
// test is skipped: one that cannot run fails.

// server is what a contract test needs of a server: where it is, an
// account it may write to, and how to reach it.
type server interface {
	// endpoint is the API's base URL.
	endpoint() string
	// account is the email and password of the account to use.
	account() (email, password string)
	// client is the HTTP client to reach the API and its object store.
	client() *http.Client
	// patient says whether a login answered 429 is waited out and tried
	// again (a shared museum's 10 a minute per IP); the fake never says 429.
	patient() bool
}

// fake is a fresh fake server with one account.
type fake struct {
	s  *enteapitest.Server
	se *session // its login, once made
}

func newFake(t *testing.T) server {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	s.AddUser(fakeEmail, fakePassword, enteapitest.UserOptions{})
	return &fake{s: s}
}

const (
	fakeEmail    = "contract@example.org"
	fakePassword = "contract password"
)

func (f *fake) endpoint() string                  { return f.s.URL() }
func (f *fake) account() (email, password string) { return fakeEmail, fakePassword }
func (f *fake) client() *http.Client              { return &http.Client{Timeout: time.Minute} }
func (f *fake) patient() bool                     { return false }

// museum is a running museum, as the environment names it.
type museum struct {
	url, email, password string
}

// museumFromEnv is the museum the environment names, nil when it names
// none, and an error when it names one only in part or its password
// cannot be read.
func museumFromEnv() (*museum, error) {
	url, email, pwFile := os.Getenv("QUAK_MUSEUM_URL"), os.Getenv("QUAK_MUSEUM_EMAIL"), os.Getenv("QUAK_MUSEUM_PASSWORD_FILE")
	switch {
	case url == "" && email == "" && pwFile == "":
		return nil, nil
	case url == "" || email == "" || pwFile == "":
		return nil, errors.New("set all of QUAK_MUSEUM_URL, QUAK_MUSEUM_EMAIL and QUAK_MUSEUM_PASSWORD_FILE, or none")
	}
	pw, err := os.ReadFile(pwFile)
	if err != nil {
		return nil, fmt.Errorf("QUAK_MUSEUM_PASSWORD_FILE: %w", err)
	}
	return &museum{url: strings.TrimRight(url, "/"), email: email, password: strings.TrimRight(string(pw), "\r\n")}, nil
}

func (m *museum) endpoint() string                  { return m.url }
func (m *museum) account() (email, password string) { return m.email, m.password }
func (m *museum) client() *http.Client              { return &http.Client{Timeout: 2 * time.Minute} }
func (m *museum) patient() bool                     { return true }

// target is a server the suite may run against: the fake, always, and
// museum when the environment names one.
type target struct {
	name string
	open func(t *testing.T) server // skips museum when none is named
}

func targets() []target {
	return []target{{"fake", newFake}, {"museum", openMuseum}}
}

// openMuseum is the museum the environment names; with none named the
// test skips, and with one named in part it fails.
func openMuseum(t *testing.T) server {
	t.Helper()
	m, err := museumFromEnv()
	require.NoError(t, err)
	if m == nil {
		t.Skip("no museum: set QUAK_MUSEUM_URL, QUAK_MUSEUM_EMAIL and QUAK_MUSEUM_PASSWORD_FILE to run against one")
	}
	return m
}

// session is an account logged in on a server, with a recorder of the
// JSON the API answered.
type session struct {
	acct *account.Account
	api  *apiclient.Client // with the account's token
	hc   *http.Client
	rec  *recorder
}

// prompter answers login's questions for a contract account.
type prompter struct{ password string }

func (p prompter) Password(context.Context) ([]byte, error) { return []byte(p.password), nil }
func (p prompter) EmailCode(context.Context, string) (string, error) {
	return enteapitest.OTT, nil // museum's fixed code for @example.org
}
func (p prompter) TOTPCode(context.Context) (string, error) {
	return "", errors.New("a contract account has no TOTP")
}
func (p prompter) PasskeyURL(string) {}
func (p prompter) DerivingKeys()     {}

// login logs in to s with password, as quak does (SRP, the keys
// unwrapped), waiting out 429s on a patient server for up to 5 minutes.
func login(t *testing.T, s server, password string) (*session, error) {
	t.Helper()
	email, _ := s.account()
	rec := newRecorder(s.endpoint())
	hc := s.client()
	hc.Transport = rec.wrap(http.DefaultTransport)
	c, err := apiclient.New(s.endpoint(), hc, "contract")
	require.NoError(t, err)
	ctx := context.Background()
	for wait := 0; ; wait++ {
		acct, err := account.Login(ctx, c, email, prompter{password}, account.Options{})
		var ae *errs.ApiError
		if errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests && s.patient() && wait < 10 {
			t.Logf("login rate-limited; waiting 30 s")
			time.Sleep(30 * time.Second)
			continue
		}
		if err != nil {
			return nil, err
		}
		return &session{acct: acct, api: c.WithToken(acct.Token), hc: hc, rec: rec}, nil
	}
}

// sessions keeps one login per museum account across tests: museum
// allows 10 login calls a minute per IP. Each fake is logged in afresh.
var sessions sync.Map // endpoint + email → *session

// sessionOf is the shared login to s.
func sessionOf(t *testing.T, s server) *session {
	t.Helper()
	email, password := s.account()
	if f, ok := s.(*fake); ok && f.se != nil {
		return f.se
	}
	key := s.endpoint() + " " + email
	if v, ok := sessions.Load(key); ok {
		return v.(*session)
	}
	se, err := login(t, s, password)
	require.NoError(t, err, "login to %s", s.endpoint())
	if f, ok := s.(*fake); ok {
		f.se = se
	} else {
		sessions.Store(key, se)
	}
	return se
}
