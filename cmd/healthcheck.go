package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// healthTimeout bounds each health-check ping, its retry included: a dead
// or hung endpoint costs a run at most this at its start (beside the
// backup) and this at its end.
const healthTimeout = 5 * time.Second

// registerPing adds the health-check flags (backup's and verify's) to f.
func registerPing(f *pflag.FlagSet, url, file *string) {
	f.StringVar(url, "healthcheck-url", "", "ping URL/start, then URL or URL/fail (healthchecks.io style); visible in ps: prefer $QUAK_HEALTHCHECK_URL or --healthcheck-url-file")
	f.StringVar(file, "healthcheck-url-file", "", "read the health-check URL from this file, readable by you alone (default $QUAK_HEALTHCHECK_URL_FILE)")
}

// healthURL is the health-check URL: --healthcheck-url, else the file
// --healthcheck-url-file or $QUAK_HEALTHCHECK_URL_FILE names, else
// $QUAK_HEALTHCHECK_URL; "" for none.
func healthURL(d deps, flagURL, flagFile string) (string, error) {
	if flagURL != "" {
		return flagURL, nil
	}
	if path := firstOf(flagFile, d.getenv("QUAK_HEALTHCHECK_URL_FILE")); path != "" {
		b, err := readSecretFile(path)
		if err != nil {
			return "", &usageError{fmt.Errorf("--healthcheck-url-file: %w", err)}
		}
		return strings.TrimSpace(string(b)), nil
	}
	return d.getenv("QUAK_HEALTHCHECK_URL"), nil
}

// stderrPinger is newPinger for a run of several folders, whose warnings
// go straight to stderr, one at a time.
func stderrPinger(d deps, url string) (*pinger, error) {
	var mu sync.Mutex
	return newPinger(d, url, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(d.stderr, "quak: "+shown(msg))
	})
}

// pinger reports a run to a health-check service in healthchecks.io's
// scheme: GET URL/start when the run begins, POST URL on success or
// POST URL/fail on failure, with the exit code and summary as the body.
// It never fails or holds up the backup beyond its timeouts, and sends
// nothing of the account: no token, no header of quak's API client.
type pinger struct {
	base    string
	hc      *http.Client
	timeout time.Duration
	warn    func(string)
	started chan struct{}
}

// newPinger returns nil (pings nothing) when url is empty.
func newPinger(d deps, raw string, warn func(string)) (*pinger, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &usageError{fmt.Errorf("--healthcheck-url must be an http(s) URL")}
	}
	t := d.healthTransport
	if t == nil {
		t = http.DefaultTransport
	}
	timeout := d.healthTimeout
	if timeout <= 0 {
		timeout = healthTimeout
	}
	// Redirects are not followed: a ping is a single request.
	hc := &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &pinger{base: strings.TrimSuffix(raw, "/"), hc: hc, timeout: timeout, warn: warn}, nil
}

// start pings URL/start in the background.
func (p *pinger) start(ctx context.Context) {
	if p == nil {
		return
	}
	p.started = make(chan struct{})
	go func() {
		defer close(p.started)
		p.send(context.WithoutCancel(ctx), "GET", "/start", "")
	}()
}

// finish waits for the start ping, then reports the outcome.
func (p *pinger) finish(ctx context.Context, code int, summary string) {
	if p == nil {
		return
	}
	if p.started != nil {
		<-p.started
	}
	body := fmt.Sprintf("exit code %d\n%s\n", code, summary)
	path := ""
	if code != exitOK {
		path = "/fail"
	}
	// Even an interrupted run reports, within the timeout.
	p.send(context.WithoutCancel(ctx), "POST", path, body)
}

// send makes one request, and one retry if the first fails, both within
// the timeout.
func (p *pinger) send(ctx context.Context, method, path, body string) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var err error
	for attempt := 0; attempt < 2 && ctx.Err() == nil; attempt++ {
		if err = p.once(ctx, method, path, body); err == nil {
			return
		}
	}
	p.warn(fmt.Sprintf("health check ping %s %s failed: %v", method, orRoot(path), err))
}

func (p *pinger) once(ctx context.Context, method, path, body string) error {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "quak/"+quakVersion())
	if body != "" {
		req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err // the URL is the user's secret ping address: keep it out of logs
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "(success)"
	}
	return path
}
