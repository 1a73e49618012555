package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/configdir"
)

// multiFlags choose a run's account, or every registered folder.
type multiFlags struct {
	account string
	all     bool
	// done, when set, is told how a backup of one folder ended.
	done func(sum *backup.Summary, code int)
}

func (m *multiFlags) register(fs *pflag.FlagSet, verb string) {
	fs.StringVar(&m.account, "account", "", "the account (email) to use when several are logged in; DIR remembers it, so later runs need not say it")
	fs.BoolVar(&m.all, "all", false, verb+" every backup folder recorded in the config (quak accounts lists them), one after another; with --account, that account's")
}

// Errors of a command line that names no folder, or cannot name one.
var (
	errNoFolderArg = errors.New("no backup folder given")
	errNoFolders   = errors.New("no backup folder is recorded")
	errInitAll     = errors.New("--init names one folder, so it cannot go with --all")
)

// args checks the folder argument: one, or none with --all.
func (m *multiFlags) args(command string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case m.all && len(args) > 0:
			return &usageError{fmt.Errorf("%s --all takes no folder: it runs on every folder recorded in the config", command)}
		case !m.all && len(args) == 0:
			return &usageError{errNoFolderArg}
		case !m.all && len(args) != 1:
			return &usageError{fmt.Errorf("%s takes one folder, got %d arguments", command, len(args))}
		}
		return folderNamed(args)
	}
}

// folderNamed refuses an empty folder argument (an unset shell variable),
// which would otherwise stand for the current folder.
func folderNamed(args []string) error {
	for _, a := range args {
		if a == "" {
			return &usageError{errors.New(`the folder given is an empty name: name DIR, or "." for the current folder`)}
		}
	}
	return nil
}

// folderRun is how one folder's run of an --all ended.
type folderRun struct {
	folder configdir.Folder
	code   int
	err    error
}

// folders is the registered folders --all runs on (only --account's when
// given), or a usage error when there is none.
func (m *multiFlags) folders(d deps) ([]configdir.Folder, error) {
	fs, path, err := loadFolders(d)
	if err != nil {
		return nil, err
	}
	var out []configdir.Folder
	for _, f := range fs.List {
		if m.account == "" || account.SameEmail(f.Email, m.account) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, &usageError{fmt.Errorf("%w in %s%s", errNoFolders, path, orEmpty(" for ", m.account))}
	}
	return out, nil
}

// forEachFolder runs one command on every folder, one after another. Each
// folder's failure is its own: it is reported with its account and the
// others still run; only an interruption stops the rest. With jsonOut,
// every JSON line the command writes carries "account" and "dir". A header
// naming the account and folder goes to human before each run.
func forEachFolder(ctx context.Context, d deps, folders []configdir.Folder, jsonOut bool, human io.Writer,
	run func(d deps, f configdir.Folder) error) []folderRun {
	var runs []folderRun
	for _, f := range folders {
		if ctx.Err() != nil {
			break
		}
		fd := d
		fd.getenv = func(k string) string {
			if k == "QUAK_HEALTHCHECK_URL" || k == "QUAK_HEALTHCHECK_URL_FILE" {
				return "" // --all pings once for the whole run
			}
			return d.getenv(k)
		}
		if jsonOut {
			fd.jsonTags = map[string]any{"account": f.Email, "dir": f.Dir}
		}
		logAbout(human, f.Dir)
		sayf(human, "== %s on %s: %s\n", firstOf(f.Email, "a public link"), f.Endpoint, f.Dir)
		err := run(fd, f)
		code := exitOK
		if err != nil {
			code = report(d.stderr, &allFolderError{folder: f, err: err})
		}
		runs = append(runs, folderRun{folder: f, code: code, err: err})
	}
	logAbout(human, "--all")
	return runs
}

// allFolderError is how one folder of an --all run failed, named by its
// account and path.
type allFolderError struct {
	folder configdir.Folder
	err    error
}

func (e *allFolderError) Error() string {
	return fmt.Sprintf("%s, %s: %v", firstOf(e.folder.Email, "a public link"), e.folder.Dir, e.err)
}

func (e *allFolderError) Unwrap() error { return e.err }

// foldersError ends an --all run some folders of which did not succeed.
// Each folder's error was reported, with its hint, as it ended.
type foldersError struct {
	code int
	msg  string
}

func (e *foldersError) Error() string { return e.msg }

// worstOf is the worst exit code of runs, by worse's order, and the error
// an --all run ends with: nil when every run succeeded.
func worstOf(ctx context.Context, runs []folderRun) (int, error) {
	code := exitOK
	bad := 0
	for _, r := range runs {
		code = worse(code, r.code)
		if r.code != exitOK {
			bad++
		}
	}
	if ctx.Err() != nil {
		return exitInterrupt, ctx.Err()
	}
	if code == exitOK {
		return code, nil
	}
	return code, &foldersError{code: code, msg: fmt.Sprintf("%d of %s did not fully succeed (exit code %d, the worst of their codes)", bad, plural(len(runs), "folder"), code)}
}

// runBackupAll backs up every registered folder with its own account, and
// pings the health check once for the whole run.
func runBackupAll(ctx context.Context, d deps, o *backupOpts) error {
	if o.init {
		return &usageError{errInitAll}
	}
	if err := o.link.check(true); err != nil {
		return err
	}
	folders, err := o.multi.folders(d)
	if err != nil {
		return err
	}
	human := d.stdout
	if o.json {
		human = d.stderr
	}
	ping, err := allPinger(d, o)
	if err != nil {
		return err
	}
	nt, err := allNotifier(d, o)
	if err != nil {
		return err
	}
	ping.start(ctx)
	begun := startOutcome("", "")
	begun.All = true
	nt.begin(ctx, begun)
	start := time.Now()
	total := &backup.Summary{}
	sums := map[string]*backup.Summary{}
	runs := forEachFolder(ctx, d, folders, o.json, human, func(fd deps, f configdir.Folder) error {
		fo := *o
		fo.healthURL, fo.healthFile = "", ""
		fo.notify = notifyFlags{}
		fo.multi = multiFlags{done: func(s *backup.Summary, _ int) {
			if s != nil && s.Started {
				sums[f.Dir] = s
				addSummary(total, s)
			}
		}}
		return runBackup(ctx, fd, &fo, f.Dir)
	})
	total.Duration = time.Since(start)
	code, err := worstOf(ctx, runs)
	lines := allLines(runs, sums, total, len(folders), code)
	totalLine := lines[len(lines)-1]
	fmt.Fprintln(human, "== every account")
	lf, lerr := openLogFile(d, d.g.logFile, "backup", "--all")
	for _, l := range lines {
		fmt.Fprintln(human, l)
		if lerr == nil {
			lf.line(l)
		}
	}
	if lerr == nil {
		_ = lf.close()
	}
	if o.json {
		f := summaryFields(total, code)
		f["folders"], f["runs"], f["dryRun"] = len(folders), len(runs), o.dryRun
		f["exitCodes"] = exitCodesOf(runs)
		f["error"] = errText(err)
		newJSONLines(d).write("total", f)
	}
	// The ping's body says how the whole run ended first, then each folder.
	body := strings.Join(append([]string{totalLine}, lines[:len(lines)-1]...), "\n")
	oc := allOutcome(runs, total, code, err, totalLine, body)
	var wg sync.WaitGroup
	wg.Go(func() { ping.finish(ctx, code, body) })
	wg.Go(func() { nt.end(ctx, oc) })
	wg.Wait()
	return err
}

// addSummary adds s's counts to t.
func addSummary(t, s *backup.Summary) {
	t.Started = true
	t.New += s.New
	t.Linked += s.Linked
	t.Adopted += s.Adopted
	t.Updated += s.Updated
	t.Unchanged += s.Unchanged
	t.Failed += s.Failed
	t.HashMismatches += s.HashMismatches
	t.DeletedOnServer += s.DeletedOnServer
	t.AlbumsDeleted += s.AlbumsDeleted
	t.AlbumsFailed += s.AlbumsFailed
	t.Skipped += s.Skipped
	t.LeftOut += s.LeftOut
	t.LocalRestored += s.LocalRestored
	t.AlbumsLeftOut += s.AlbumsLeftOut
	t.Pruned += s.Pruned
	t.Restored += s.Restored
	t.Bytes += s.Bytes
	t.TotalFiles += s.TotalFiles
	t.TotalBytes += s.TotalBytes
	t.Failures = append(t.Failures, s.Failures...)
	if t.Reasons == nil {
		t.Reasons = map[string]int{}
	}
	for k, v := range s.Reasons {
		t.Reasons[k] += v
	}
}

// exitCodesOf maps each folder to its run's exit code, for JSON.
func exitCodesOf(runs []folderRun) []map[string]any {
	out := make([]map[string]any, 0, len(runs))
	for _, r := range runs {
		out = append(out, map[string]any{"account": r.folder.Email, "dir": r.folder.Dir, "exitCode": r.code, "error": errText(r.err)})
	}
	return out
}

func errText1(err error) string {
	if err == nil {
		return "nothing to do"
	}
	return err.Error()
}

// allPinger is the one pinger of a --all run (none for a dry run).
func allPinger(d deps, o *backupOpts) (*pinger, error) {
	url, err := healthURL(d, o.healthURL, o.healthFile)
	if err != nil || o.dryRun {
		return nil, err
	}
	return stderrPinger(d, url)
}

// allLines are --all's closing lines: one per folder, then the total.
func allLines(runs []folderRun, sums map[string]*backup.Summary, total *backup.Summary, folders, code int) []string {
	lines := make([]string, 0, len(runs)+1)
	for _, r := range runs {
		what := "refused before it started: " + errText1(r.err)
		if s := sums[r.folder.Dir]; s != nil {
			what = summaryLine(s)
		}
		lines = append(lines, shownf("%s, %s: exit code %d: %s", firstOf(r.folder.Email, "a public link"), r.folder.Dir, r.code, what))
	}
	// A folder refused before it started adds no counts: with none
	// started, zero counts would read like an empty success.
	counts := "every one was refused before it started"
	if total.Started {
		counts = summaryLine(total)
	}
	return append(lines, fmt.Sprintf("%sTotal for %d of %s: %s; exit code %d", outcomeFirst(code), len(runs), plural(folders, "folder"), counts, code))
}

// runOnAll runs a per-folder command (status, verify) on every registered
// folder, each with its own account, and ends with the worst code.
func runOnAll(ctx context.Context, d deps, multi *multiFlags, jsonOut bool, each func(d deps, dir string) error) error {
	folders, err := multi.folders(d)
	if err != nil {
		return err
	}
	human := d.stdout
	if jsonOut {
		human = d.stderr
	}
	runs := forEachFolder(ctx, d, folders, jsonOut, human, func(fd deps, f configdir.Folder) error {
		return each(fd, f.Dir)
	})
	return endAll(ctx, human, runs, len(folders))
}

// endAll prints one line per folder and the worst code, and returns the
// error the run ends with.
func endAll(ctx context.Context, human io.Writer, runs []folderRun, n int) error {
	code, err := worstOf(ctx, runs)
	fmt.Fprintln(human, "== every account")
	for _, r := range runs {
		sayf(human, "%s, %s: exit code %d\n", firstOf(r.folder.Email, "a public link"), r.folder.Dir, r.code)
	}
	fmt.Fprintf(human, "Total for %d of %s: exit code %d\n", len(runs), plural(n, "folder"), code)
	return err
}
