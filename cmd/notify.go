package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
)

// notifyTimeout bounds a notification: the command runs at most this long
// (then it is stopped, with everything it started), and the POST, its one
// retry included, takes at most this too.
const notifyTimeout = 30 * time.Second

// notifyStopTimeout bounds the notifications of a run that was
// interrupted: quak is being stopped, and a container manager kills what
// does not stop within a few seconds.
const notifyStopTimeout = 3 * time.Second

// maxNotifyOutput is how much of a notify command's output is kept, to
// quote the end of it when the command fails.
const maxNotifyOutput = 4096

// Events a notification reports.
const (
	eventStart   = "start"
	eventSuccess = "success"
	eventFailure = "failure"
)

// outcomeRefused names a run refused before it started, beside the
// outcomes a run record has.
const outcomeRefused = "refused"

// notifyFlags choose how a backup run tells someone how it ended, beside
// the health-check ping: a command of the user's, a POST of JSON, or both.
type notifyFlags struct {
	command string
	url     string
	urlFile string
	start   bool
}

func (n *notifyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&n.command, "notify-command", "", "run this shell command after every run, how the run ended in QUAK_* variables (default $QUAK_NOTIFY_COMMAND)")
	fs.StringVar(&n.url, "notify-url", "", "POST how every run ended, as JSON, to this URL; visible in ps: prefer $QUAK_NOTIFY_URL or --notify-url-file")
	fs.StringVar(&n.urlFile, "notify-url-file", "", "read the --notify-url from this file, readable by you alone (default $QUAK_NOTIFY_URL_FILE)")
	fs.BoolVar(&n.start, "notify-start", false, "also notify when a run starts (event start)")
}

// target is the notify command and URL the flags and environment give:
// the flags first, then $QUAK_NOTIFY_COMMAND; for the URL, the file
// --notify-url-file or $QUAK_NOTIFY_URL_FILE names, then $QUAK_NOTIFY_URL.
func (n *notifyFlags) target(d deps) (command, rawURL string, err error) {
	command = firstOf(n.command, d.getenv("QUAK_NOTIFY_COMMAND"))
	if n.url != "" {
		return command, n.url, nil
	}
	if path := firstOf(n.urlFile, d.getenv("QUAK_NOTIFY_URL_FILE")); path != "" {
		b, err := readSecretFile(path)
		if err != nil {
			return "", "", &usageError{fmt.Errorf("--notify-url-file: %w", err)}
		}
		return command, strings.TrimSpace(string(b)), nil
	}
	return command, d.getenv("QUAK_NOTIFY_URL"), nil
}

// notifier runs the notify command and posts to the notify URL. Neither
// can fail the backup or hold it up beyond notifyTimeout: a failure is
// reported through warn. It sends nothing of the account's secrets, and
// its error messages never hold the URL, which may carry a token.
type notifier struct {
	command string
	url     string
	start   bool
	hc      *http.Client
	timeout time.Duration
	stop    time.Duration // what a notification has left once quak is stopped
	warn    func(string)
	environ []string // the command's environment before the outcome's
	host    string
	now     func() time.Time
	begun   chan struct{}
}

// newNotifier returns nil (notifies nothing) when neither a command nor a
// URL is given. A URL that is not http(s) is a usage error that does not
// quote it.
func newNotifier(d deps, f *notifyFlags, warn func(string)) (*notifier, error) {
	command, raw, err := f.target(d)
	if err != nil || (command == "" && raw == "") {
		return nil, err
	}
	if raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, &usageError{fmt.Errorf("--notify-url must be an http(s) URL")}
		}
	}
	t := d.healthTransport
	if t == nil {
		t = http.DefaultTransport
	}
	timeout := d.notifyTimeout
	if timeout <= 0 {
		timeout = notifyTimeout
	}
	stop := d.notifyStopTimeout
	if stop <= 0 {
		stop = notifyStopTimeout
	}
	environ := d.environ
	if environ == nil {
		environ = os.Environ
	}
	now := d.now
	if now == nil {
		now = time.Now
	}
	host, _ := os.Hostname()
	return &notifier{
		command: command, url: raw, start: f.start, timeout: timeout, stop: stop, warn: warn, now: now, host: host,
		environ: withoutSecrets(environ()),
		// A notification is one request: redirects are not followed.
		hc: &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

// secretVars are variables of quak's that may hold a secret, kept from
// the notify command's environment.
var secretVars = []string{"QUAK_HEALTHCHECK_URL", "QUAK_NOTIFY_URL"}

// withoutSecrets is env without secretVars and without any QUAK_ variable
// a notification sets itself.
func withoutSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isSecretVar(name) && !isOutcomeVar(name) {
			out = append(out, kv)
		}
	}
	return out
}

func isSecretVar(name string) bool {
	for _, s := range secretVars {
		if name == s {
			return true
		}
	}
	return false
}

// begin notifies the start of a run in the background, with --notify-start.
func (n *notifier) begin(ctx context.Context, oc outcome) {
	if n == nil || !n.start {
		return
	}
	oc.Event = eventStart
	n.begun = make(chan struct{})
	go func() {
		defer close(n.begun)
		// Once quak is stopped, the start's news is stale: it ends at once.
		ctx, cancel := within(ctx, n.timeout, 0)
		defer cancel()
		n.send(ctx, oc, n.timeout)
	}()
}

// end waits for the start's notification, then notifies how the run
// ended, within a shorter time when it was interrupted, and within n.stop
// of quak being stopped while it runs.
func (n *notifier) end(ctx context.Context, oc outcome) {
	if n == nil {
		return
	}
	if n.begun != nil {
		<-n.begun
	}
	limit := n.timeout
	if oc.Outcome == folder.OutcomeInterrupted {
		limit = min(limit, n.stop)
	}
	ctx, cancel := within(ctx, limit, n.stop)
	defer cancel()
	n.send(ctx, oc, limit)
}

// within is a notification's context: ctx's values, not its end; it ends
// after limit, or grace after ctx ends (quak is being stopped, and a
// container manager kills what does not stop within a few seconds),
// whichever comes first.
func within(ctx context.Context, limit, grace time.Duration) (context.Context, context.CancelFunc) {
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return nctx, func() {
		stop()
		cancel()
	}
}

// send runs the command and posts to the URL side by side, each within
// limit, and reports each failure.
func (n *notifier) send(ctx context.Context, oc outcome, limit time.Duration) {
	oc.Host, oc.Version, oc.Time = n.host, quakVersion(), n.now().UTC()
	var wg sync.WaitGroup
	if n.command != "" {
		wg.Go(func() {
			if err := runNotifyCommand(ctx, n.command, append(append([]string{}, n.environ...), oc.env()...), limit); err != nil {
				n.warn(fmt.Sprintf("notify command (event %s) failed: %v", oc.Event, err))
			}
		})
	}
	if n.url != "" {
		wg.Go(func() {
			if err := n.post(ctx, oc, limit); err != nil {
				n.warn(fmt.Sprintf("notify URL (event %s) failed: %v", oc.Event, err))
			}
		})
	}
	wg.Wait()
}

// runNotifyCommand runs command in the shell with env, stopping it and
// every process it started after limit. Its output is kept only to quote
// the end of it in the error.
func runNotifyCommand(ctx context.Context, command string, env []string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := shellCommand(ctx, command)
	c.Env = env
	out := &tailBuffer{max: maxNotifyOutput}
	c.Stdout, c.Stderr = out, out
	ownProcessGroup(c)
	// Output still held open by something the command left behind ends
	// the wait after this.
	c.WaitDelay = time.Second
	err := c.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("stopped after its time limit of %s%s", limit, out.lastLine())
	case ctx.Err() != nil:
		return fmt.Errorf("stopped as quak stops%s", out.lastLine())
	case err != nil:
		return fmt.Errorf("%w%s", err, out.lastLine())
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// lastLine is ": " and the last line of output, or "" for none.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// post sends the outcome as JSON, and once more if the first try fails,
// both within limit.
func (n *notifier) post(ctx context.Context, oc outcome, limit time.Duration) error {
	body, err := json.Marshal(oc.payload())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for attempt := 0; attempt < 2 && ctx.Err() == nil; attempt++ {
		if err = n.postOnce(ctx, body); err == nil {
			return nil
		}
	}
	return err
}

func (n *notifier) postOnce(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, "POST", n.url, bytes.NewReader(body))
	if err != nil {
		return errors.New("the URL cannot be used") // its text would quote it
	}
	req.Header.Set("User-Agent", "quak/"+quakVersion())
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err // the URL may hold a token: keep it out of logs
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

// outcome is how a backup run ended (or that it started), as a
// notification tells it: the same code, summary line and error as the
// printer, the health-check ping and last-run.json.
type outcome struct {
	Event   string
	Outcome string // a record's outcome, or outcomeRefused; "" at the start
	Code    int    // -1 at the start
	Summary string // one line
	Error   string // one line; "" for none
	Counts  folder.Counts
	Bytes   int64
	// Folder and Account are the run's; an --all run (All) has none, but
	// one folderOutcome per folder it ran.
	Folder, Account, Endpoint string
	All                       bool
	Folders                   []folderOutcome
	// Message is the ping's body without its first line: the summary,
	// the error, and an --all run's line per folder.
	Message string
	Host    string
	Version string
	Time    time.Time
}

// folderOutcome is one folder's line of an --all run's outcome.
type folderOutcome struct {
	Account string `json:"account"`
	Folder  string `json:"folder"`
	Code    int    `json:"exitCode"`
	Error   any    `json:"error"`
}

// startOutcome is the outcome a run's start notification tells.
func startOutcome(dir, account string) outcome {
	return outcome{Event: eventStart, Code: -1, Summary: "started", Message: "started", Folder: dir, Account: account}
}

// endOutcome is how a backup run ended, from what ends every run: its
// summary (nil or not started for a refused run), code and error.
func endOutcome(sum *backup.Summary, code int, err error, dir, account, endpoint string) outcome {
	oc := outcome{Event: eventSuccess, Code: code, Outcome: outcomeOf(code), Folder: dir, Account: account, Endpoint: endpoint}
	if code != exitOK {
		oc.Event = eventFailure
	}
	if err != nil {
		oc.Error = oneLine(fmt.Sprint(errText(err)))
	}
	if sum == nil || !sum.Started {
		oc.Outcome = outcomeRefused
		oc.Summary = "REFUSED before it started: " + oc.Error
		oc.Message = oc.Summary
		return oc
	}
	oc.Counts, oc.Bytes = countsOf(sum), sum.Bytes
	oc.Summary = outcomeFirst(code) + summaryLine(sum)
	oc.Message = oc.Summary
	if oc.Error != "" {
		oc.Message += "\nerror: " + oc.Error
	}
	return oc
}

// allOutcome is how an --all run ended: the worst code, the total line,
// the ping's body, and each folder's code and error.
func allOutcome(runs []folderRun, total *backup.Summary, code int, err error, totalLine, body string) outcome {
	oc := endOutcome(total, code, err, "", "", "")
	oc.All, oc.Summary, oc.Message = true, totalLine, body
	oc.Folders = make([]folderOutcome, 0, len(runs))
	for _, r := range runs {
		oc.Folders = append(oc.Folders, folderOutcome{Account: r.folder.Email, Folder: r.folder.Dir, Code: r.code, Error: errText(r.err)})
	}
	return oc
}

// allNotifier is the one notifier of an --all run (none for a dry run).
func allNotifier(d deps, o *backupOpts) (*notifier, error) {
	if o.dryRun {
		return nil, nil
	}
	var mu sync.Mutex
	return newNotifier(d, &o.notify, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(d.stderr, "quak: "+msg)
	})
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")), " ")
}

// title is a notification's headline: where, what, and how it ended.
func (oc outcome) title() string {
	what := "backup of " + oc.Folder
	switch {
	case oc.All && oc.Event == eventStart:
		what = "backup of every folder"
	case oc.All:
		what = "backup of " + plural(len(oc.Folders), "folder")
	}
	var how string
	switch {
	case oc.Event == eventStart:
		how = "started"
	case oc.Code == exitOK:
		how = "ok"
	default:
		how = fmt.Sprintf("%s (exit code %d)", strings.ToUpper(oc.Outcome), oc.Code)
	}
	return "quak on " + firstOf(oc.Host, "this machine") + ": " + what + " " + how
}

// outcomeVars are the variables a notify command gets, in env's order.
var outcomeVars = []string{
	"QUAK_EVENT", "QUAK_OUTCOME", "QUAK_EXIT_CODE", "QUAK_SUMMARY", "QUAK_ERROR", "QUAK_NEW", "QUAK_FAILED",
	"QUAK_DELETED", "QUAK_BYTES", "QUAK_FOLDER", "QUAK_ACCOUNT", "QUAK_ENDPOINT", "QUAK_FOLDERS", "QUAK_TITLE",
	"QUAK_MESSAGE", "QUAK_HOST", "QUAK_VERSION",
}

func isOutcomeVar(name string) bool {
	for _, v := range outcomeVars {
		if name == v {
			return true
		}
	}
	return false
}

// env is the outcome as NAME=value pairs for a notify command.
func (oc outcome) env() []string {
	code := ""
	if oc.Code >= 0 {
		code = strconv.Itoa(oc.Code)
	}
	folders := ""
	if oc.All && oc.Event != eventStart {
		folders = strconv.Itoa(len(oc.Folders))
	}
	values := []string{
		oc.Event, oc.Outcome, code, oc.Summary, oc.Error, strconv.Itoa(oc.Counts.New), strconv.Itoa(oc.Counts.Failed),
		strconv.Itoa(oc.Counts.DeletedOnServer), strconv.FormatInt(oc.Bytes, 10), oc.Folder, oc.Account, oc.Endpoint,
		folders, oc.title(), oc.Message, oc.Host, oc.Version,
	}
	env := make([]string, len(outcomeVars))
	for i, name := range outcomeVars {
		env[i] = name + "=" + values[i]
	}
	return env
}

// payload is the outcome as --notify-url posts it. title, message (body
// for Apprise) and type (Apprise's info, success, warning or failure) let
// services that take a JSON POST show it as it is.
func (oc outcome) payload() map[string]any {
	var code, errv any
	if oc.Code >= 0 {
		code = oc.Code
	}
	if oc.Error != "" {
		errv = oc.Error
	}
	p := map[string]any{
		"event": oc.Event, "outcome": oc.Outcome, "exitCode": code, "summary": oc.Summary, "error": errv,
		"counts": oc.Counts, "bytes": oc.Bytes, "folder": oc.Folder, "account": oc.Account, "endpoint": oc.Endpoint,
		"host": oc.Host, "version": oc.Version, "time": oc.Time.Format(time.RFC3339),
		"title": oc.title(), "message": oc.Message, "body": oc.Message, "type": appriseType(oc),
	}
	if oc.All && oc.Event != eventStart {
		p["folders"] = oc.Folders
	}
	return p
}

// appriseType is the kind of notification in Apprise's words.
func appriseType(oc outcome) string {
	switch {
	case oc.Event == eventStart:
		return "info"
	case oc.Code == exitOK:
		return "success"
	case oc.Code == exitPartial:
		return "warning"
	}
	return "failure"
}
