package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/configdir"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/retry"
)

// configDir is $QUAK_CONFIG_DIR, else quak's folder in the user config dir
// ($XDG_CONFIG_HOME or ~/.config on Linux).
func configDir(getenv func(string) string) (string, error) {
	if d := getenv("QUAK_CONFIG_DIR"); d != "" {
		return d, nil
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "quak"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config folder: set QUAK_CONFIG_DIR (%w)", err)
	}
	return filepath.Join(d, "quak"), nil
}

func sessionPath(getenv func(string) string) (string, error) {
	d, err := configDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "session.json"), nil
}

// netFlags are the transport settings every networked command takes.
type netFlags struct {
	requestTimeout time.Duration
	idleTimeout    time.Duration
}

func (n *netFlags) register(fs *pflag.FlagSet) {
	d := apiclient.DefaultDeadlines()
	durationVar(fs, &n.requestTimeout, "request-timeout", d.Headers, "give up on a request with no response headers after this long (20s, 2min)")
	durationVar(fs, &n.idleTimeout, "idle-timeout", d.BodyIdle, "give up on an answer that sends no byte for this long")
}

// client builds the API client for endpoint with quak's deadlines.
func (n *netFlags) client(d deps, endpoint string) (*apiclient.Client, error) {
	return apiclient.New(endpoint, n.httpClient(d), quakVersion())
}

// maxIdlePerHost keeps a connection for every request quak may have in
// flight to one host: the most downloads at once, and the ranges of the
// two large files fetched as ranges at the most --streams allows. Fewer,
// and connections freed at once beyond it are closed, to be opened again
// (a round trip, two more with TLS).
const maxIdlePerHost = pace.DefaultMax + download.MultiStreamFiles*maxStreams

// baseTransport is the HTTP transport under quak's deadlines.
func baseTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdlePerHost
	return t
}

// loadSession reads the only session and returns it with a client of its
// server; with several accounts logged in, see loadSessionFor.
func loadSession(d deps, n *netFlags) (*account.Account, *apiclient.Client, error) {
	return loadSessionFor(d, n, "", "")
}

// readSecretFile reads a password or health-check URL file, refusing one
// that group or others can read, and drops one trailing newline.
func readSecretFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a file", path)
	}
	if fi.Mode().Perm()&0o044 != 0 {
		return nil, &configdir.InsecureFileError{Path: path, Mode: fi.Mode()}
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	return []byte(s), nil
}

// retryPolicy is quak's retry policy with --attempts, sleeping through
// deps (tests record the waits instead).
func retryPolicy(d deps, attempts int) retry.Policy {
	p := retry.Default()
	p.MaxAttempts = attempts
	if d.sleep != nil {
		p.Sleep = d.sleep
	}
	return p
}
