package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/configdir"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/restore"
	"github.com/quak-photos/quak/restore/takeout"
	"github.com/quak-photos/quak/thumbnails"
)

// deps is what commands need from the outside world, so tests can supply
// their own streams, environment, clock and transport.
type deps struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// readPassword reads a line without echo; nil when stdin is no terminal.
	readPassword func() ([]byte, error)
	// saveTerminal, when set, saves the terminal's state and returns what
	// puts it back.
	saveTerminal func() (restore func())
	sleep        func(context.Context, time.Duration) error
	now          func() time.Time  // nil: time.Now
	transport    http.RoundTripper // nil: a clone of http.DefaultTransport
	// stderrIsTerminal shows a progress bar; cron gets plain lines.
	stderrIsTerminal bool
	umask            os.FileMode
	// healthTimeout bounds each health-check ping (0: healthTimeout), and
	// healthTransport carries them (nil: http.DefaultTransport).
	healthTimeout   time.Duration
	healthTransport http.RoundTripper
	// freeSpace reports a folder's free bytes (nil: statfs).
	freeSpace func(string) (int64, error)
	// jsonTags are fields every JSON line carries (--all: the account
	// and folder of the run that writes it).
	jsonTags map[string]any
	// canWrite makes and removes a file in a folder (nil: the folder
	// package's own probe); tests stand it for a file system remounted
	// read-only, which root cannot otherwise see.
	canWrite func(string) error
	// g holds the global flags once parsed (never nil under run).
	g *globalFlags
	// terminated reports that SIGTERM, not Ctrl-C, stopped the run (nil:
	// never), so its records say 143 as its exit does.
	terminated func() bool
	// notifyTimeout bounds each notification (0: notifyTimeout),
	// notifyStopTimeout those cut short by a stop (0: notifyStopTimeout),
	// and environ is the notify command's environment (nil: os.Environ).
	notifyTimeout     time.Duration
	notifyStopTimeout time.Duration
	environ           func() []string
	// pause waits between the runs of backup --every (nil: a timer raced
	// against the context), and jitter draws from [0, 1) to spread them
	// (nil: math/rand/v2).
	pause  func(context.Context, time.Duration) error
	jitter func() float64
}

// stopped is code as the run ends it: an interrupted run that SIGTERM
// stopped ends 143.
func (d deps) stopped(code int) int {
	if code == exitInterrupt && d.terminated != nil && d.terminated() {
		return exitTerminated
	}
	return code
}

// Main runs quak with the process's arguments, streams and environment, and
// returns the exit code. SIGINT and SIGTERM cancel the run; quak then exits
// 130 or 143.
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var caught atomic.Value
	go func() {
		s := <-sigs
		caught.Store(s)
		cancel()
	}()
	d := deps{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		terminated: func() bool { return caught.Load() == syscall.SIGTERM }}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		d.readPassword = func() ([]byte, error) { return term.ReadPassword(fd) }
		d.saveTerminal = func() func() {
			st, err := term.GetState(fd)
			if err != nil {
				return func() {}
			}
			return func() { _ = term.Restore(fd, st) }
		}
	}
	d.stderrIsTerminal = term.IsTerminal(int(os.Stderr.Fd()))
	d.umask = umask()
	code := run(ctx, d, os.Args[1:])
	switch caught.Load() {
	case nil:
		return code
	case syscall.SIGTERM:
		return exitTerminated
	default:
		return exitInterrupt
	}
}

// run executes one command line and turns its outcome into an exit code.
func run(ctx context.Context, d deps, args []string) int {
	g := &globalFlags{}
	out := &humanOut{real: d.stdout, g: g}
	errw := &humanOut{real: d.stderr, g: g}
	d.g, d.stdout, d.stderr = g, out, errw
	root := newRootCmd(d)
	root.SetArgs(args)
	var stopLog func()
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := g.check(); err != nil {
			return err
		}
		if c.Name() == "backup" {
			return nil // backup logs its own lines
		}
		var err error
		stopLog, err = startLog(d, strings.TrimPrefix(c.CommandPath(), root.Name()+" "), logFolder(c, args), out, errw)
		return err
	}
	c, err := root.ExecuteContextC(ctx)
	// What --quiet held back is shown when the command failed, before
	// the error.
	out.release(err != nil)
	errw.release(err != nil)
	g.quiet = false
	code := reportIn(errw, err, c)
	if err != nil && jsonAsked(c) && !reportedInJSON(err) {
		newJSONLines(d).write("error", map[string]any{"error": errText(err), "exitCode": code})
	}
	if stopLog != nil {
		stopLog()
	}
	return code
}

func newRootCmd(d deps) *cobra.Command {
	root := &cobra.Command{
		Use:   "quak",
		Short: "Back up an Ente Photos account to a local folder",
		Long: `quak backs up an Ente Photos account (hosted or self-hosted) to a local
folder, verifying every file against Ente's hash before giving it its name.

Every command takes -q (print nothing on success), -v (every retry and every
file's decision) and --log-file PATH.

` + everyExitCode() + "\n\n" + allOrderText(),
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &mistypedError{err: fmt.Errorf("unknown command %q", args[0]), near: c.SuggestionsFor(args[0])}
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	d.g.register(root.PersistentFlags())
	root.SuggestionsMinimumDistance = 2
	root.SetIn(d.stdin)
	root.SetOut(d.stdout)
	root.SetErr(d.stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newLoginCmd(d), newLogoutCmd(d), newAccountsCmd(d), newWhoamiCmd(d), newBackupCmd(d), newStatusCmd(d), newVerifyCmd(d), newPruneTrashCmd(d), newHelperCmd(d), newRestoreCmd(d), newImportCmd(d))
	return root
}

// logFolder is the folder command c is about, as its log lines name it:
// its DIR, --all, the thumbnail helper's --from, or "" for none.
func logFolder(c *cobra.Command, args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	if all, err := c.Flags().GetBool("all"); err == nil && all {
		return "--all"
	}
	if from, err := c.Flags().GetString("from"); err == nil {
		return from
	}
	return ""
}

// jsonAsked reports whether status or verify ran with --json (backup and
// the helper always end their JSON with a summary of their own).
func jsonAsked(c *cobra.Command) bool {
	if c == nil || (c.Name() != "status" && c.Name() != "verify") {
		return false
	}
	on, err := c.Flags().GetBool("json")
	return err == nil && on
}

// reportedInJSON reports the errors whose command already said everything
// in its JSON: an unhealthy status, problems verify found.
func reportedInJSON(err error) bool {
	var se *statusError
	var pe *problemsError
	var fe *foldersError
	return (errors.As(err, &se) && se.inJSON) || errors.As(err, &pe) || errors.As(err, &fe)
}

// usageError marks a bad command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// mistypedError is a command or flag quak does not know, a usage error;
// near holds the names it may have meant.
type mistypedError struct {
	err  error
	near []string
}

func (e *mistypedError) Error() string { return e.err.Error() }
func (e *mistypedError) Unwrap() error { return e.err }

// report prints err for a person and returns the exit code it deserves.
// It is the one place where errors become text and codes.
func report(w io.Writer, err error) int { return reportIn(w, err, nil) }

// reportIn is report for an error of command c (nil: quak itself), whose
// --help a hint may point to. An error gets at most one hint, from hintFor.
func reportIn(w io.Writer, err error, c *cobra.Command) int {
	if err == nil {
		return exitOK
	}
	code := exitCodeFor(err)
	if code == exitInterrupt {
		fmt.Fprintln(w, "quak: interrupted")
		return code
	}
	command := "quak"
	if c != nil {
		command = c.CommandPath()
	}
	sayf(w, "quak: error: %s\n", err)
	if hint := hintFor(err, code, command); hint != "" {
		sayf(w, "quak: hint: %s\n", hint)
	}
	return code
}

// exitCodeFor is the exit code err ends a command with.
func exitCodeFor(err error) int {
	var ue *usageError
	var me *mistypedError
	var pe *partialError
	var qe *problemsError
	var de *folder.DirError
	var ne *folder.NestedError
	var ur *backup.UnreachableError
	var nm *filter.NoMatchError
	var su *thumbnails.StoreUnavailableError
	var tp *takeout.PartError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupt
	case isLinkRefusal(err):
		return linkExitCode(err)
	case errors.As(err, &pe), errors.As(err, &qe):
		return exitPartial
	case errors.Is(err, folder.ErrLocked), errors.Is(err, thumbnails.ErrBackupBusy):
		return exitLocked
	case errors.As(err, &de), errors.As(err, &ne), errors.As(err, &tp):
		return exitUnusableDir
	case errors.As(err, &ue), errors.As(err, &me), errors.As(err, &nm):
		return exitUsage
	case errors.Is(err, errs.ErrNotLoggedIn):
		return exitLogin
	case errors.As(err, &ur), errors.As(err, &su):
		return exitTempFail
	}
	var sc *statusError
	if errors.As(err, &sc) {
		return sc.code
	}
	var fe *foldersError
	if errors.As(err, &fe) {
		return fe.code
	}
	return exitFatal
}

// hintFor is what to do about err, an error of command (its path, such as
// "quak backup"), or "": the one table of hints, one for each error.
func hintFor(err error, code int, command string) string {
	var ae *errs.ApiError
	var me *mistypedError
	var amb *configdir.AmbiguousError
	var nm *filter.NoMatchError
	var fe *foldersError
	var ue *backup.UnreachableError
	var se *statusError
	var le *loginError
	switch {
	case errors.As(err, &fe):
		return "" // each folder's error came with its own hint
	case errors.As(err, &se) && se.hint != "":
		return se.hint
	case code == exitLocked:
		return "wait for the other run to finish; the lock goes away with it"
	case isLinkRefusal(err):
		return linkHint(err, command)
	case errors.As(err, &me):
		if len(me.near) == 0 {
			return "run `" + command + " --help`"
		}
		return "did you mean " + strings.Join(me.near, " or ") + "?"
	case errors.Is(err, errNoFolderArg):
		return "run `" + command + " DIR`, or `" + command + " --all` for every folder quak backup recorded"
	case errors.Is(err, errSeveralAccounts):
		return "say which with --account EMAIL; `quak accounts` lists them"
	case errors.As(err, &amb):
		return "log out of one of them: `quak logout --account EMAIL --endpoint URL`"
	case errors.Is(err, errNoFolders), errors.Is(err, errInitAll):
		return "run `quak backup --init --account EMAIL DIR` once for each folder"
	case errors.Is(err, errNotRecorded):
		return "`quak accounts` lists the folders recorded"
	case errors.As(err, &nm):
		return "" // it names the nearest albums
	case folderHint(err, command) != "":
		return folderHint(err, command)
	case errors.As(err, &ue):
		return "try again later; the next run carries on where this one stopped"
	case code == exitUsage:
		return "run `" + command + " --help`"
	case errors.As(err, &le):
		return le.hint()
	case code == exitLogin:
		return "run `quak login`"
	case errors.Is(err, account.ErrWrongPassword):
		return "check the password; quak never retries a login by itself"
	case errors.As(err, &ae) && ae.Status == 429:
		return rateLimitHint(ae)
	}
	return ""
}

// rateLimitHint says which of museum's login limits err hit and how long
// to wait; museum sends no Retry-After, so the wait comes from its rules.
func rateLimitHint(ae *errs.ApiError) string {
	wait := ""
	if ae.RetryAfter != "" {
		wait = " (the server asks for " + ae.RetryAfter + " seconds)"
	}
	switch {
	case ae.Code == "TOO_MANY_UNVERIFIED_SESSIONS":
		return "the server refuses an 11th login left unfinished within an hour for this account: wait an hour, then log in once" + wait
	case strings.Contains(ae.Message, "Rate limit"):
		return "the server allows 10 login requests a minute from one address: wait a minute" + wait
	case strings.HasPrefix(ae.Path, "/users/two-factor"):
		return "too many wrong two-factor codes in this login: wait a minute, then start quak login again" + wait
	case strings.HasPrefix(ae.Path, "/users/ott"), strings.HasPrefix(ae.Path, "/users/verify-email"):
		return "too many emailed codes or wrong codes for this email: wait an hour, until the codes sent expire" + wait
	}
	return "the server limits login attempts: wait an hour before trying again" + wait
}

// noArgs is cobra.NoArgs with a typed error, so it exits as a usage error.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}

// folderHint is the advice for a backup folder quak refused: missing, out
// of space, a link, a secret file others can read, or nested in another
// backup; "" for any other error.
func folderHint(err error, command string) string {
	var de *folder.DirError
	var ie *configdir.InsecureFileError
	var ne *folder.NestedError
	var af *allFolderError
	switch {
	case errors.As(err, &de) && de.Kind == folder.DirMissing && errors.As(err, &af):
		return "is the disk mounted? If the folder is gone for good, `quak accounts --forget " + af.folder.Dir + "` leaves it out of --all"
	case errors.As(err, &de) && de.Kind == folder.DirMissing && command == "quak backup":
		return "is the disk mounted? `quak backup --init DIR` creates a folder that is missing on purpose"
	case errors.As(err, &de) && de.Kind == folder.DirMissing:
		return "is the disk mounted?"
	case errors.As(err, &de) && de.Kind == folder.DirNoSpace:
		return "free some space, narrow the backup (--albums, --since, …), or pass --no-space-check"
	case errors.As(err, &de) && de.Kind == folder.DirLink:
		return "make it a plain folder: quak never follows a symbolic link out of the backup"
	case errors.As(err, &ie):
		return "it holds a secret: run `chmod 600 " + ie.Path + "`"
	case errors.As(err, &ne) && ne.Inside != "":
		return "back up " + ne.Inside + " itself, or pass --allow-nested to keep a separate backup in this folder"
	case errors.As(err, &ne):
		return "give one of them as DIR, or pass --allow-nested to keep a backup here as well"
	case errors.As(err, &de) && command == "quak restore":
		return restorableBelow(de.Dir)
	}
	return ""
}

// restorableBelow names the backups and exports up to three folders below
// dir, the folder a restore was given, which holds neither: "" for none.
func restorableBelow(dir string) string {
	found := folder.Below(dir, func(p string) bool {
		return folder.At(p).HasState() || restore.IsEnteExport(p) || restore.IsDesktopExport(p)
	})
	switch len(found) {
	case 0:
		return ""
	case 1:
		return found[0] + " looks like one: run `quak restore " + found[0] + "`"
	}
	return strings.Join(found, ", ") + " look like ones: restore each with `quak restore DIR`"
}
