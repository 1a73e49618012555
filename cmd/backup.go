package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/verify"
	"github.com/quak-photos/quak/retry"
)

type backupOpts struct {
	net         netFlags
	concurrency int
	attempts    int
	json        bool
	healthURL   string
	healthFile  string
	verify      bool
	init        bool
	noSpace     bool
	nested      bool
	prune       bool
	maxDelete   int
	dryRun      bool
	metaOnly    bool
	resumeAbove int64
	bwlimit     bwlimit
	streams     int
	filters     filterFlags
	views       viewFlags
	fs          *pflag.FlagSet // which flags were given
	multi       multiFlags
	link        linkFlags
	notify      notifyFlags
	every       time.Duration
}

// filterFlags are backup's choices of what to download.
type filterFlags struct {
	albums, exclude                []string
	noShared, noHidden, noArchived bool
	since, until                   string
	skipVideos, skipLive           bool
}

func (f *filterFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.albums, "albums", nil, "only these albums (name glob, case-insensitive, or id; repeatable)")
	fs.StringArrayVar(&f.exclude, "exclude-albums", nil, "not these albums (name glob or id; repeatable)")
	fs.BoolVar(&f.noShared, "no-shared", false, "skip albums others share with you")
	fs.BoolVar(&f.noHidden, "no-hidden", false, "skip hidden albums")
	fs.BoolVar(&f.noArchived, "no-archived", false, "skip archived albums")
	fs.StringVar(&f.since, "since", "", "only files created at or after: a date (2024-06-01), RFC 3339 time, or age (90d, 2w, 12h)")
	fs.StringVar(&f.until, "until", "", "only files created before: a date, RFC 3339 time, or age")
	fs.BoolVar(&f.skipVideos, "skip-videos", false, "do not download videos")
	fs.BoolVar(&f.skipLive, "skip-live-photos", false, "do not download live photos")
}

// set turns the flags into a filter.Set, or a usage error.
func (f *filterFlags) set(now time.Time) (filter.Set, error) {
	s := filter.Set{Albums: filter.Albums{Include: f.albums, Exclude: f.exclude}, NoShared: f.noShared,
		NoHidden: f.noHidden, NoArchived: f.noArchived, SkipVideos: f.skipVideos, SkipLive: f.skipLive}
	if err := s.Albums.Validate(); err != nil {
		return s, &usageError{err}
	}
	var err error
	if f.since != "" {
		if s.Since, err = filter.ParseTime(f.since, now); err != nil {
			return s, &usageError{fmt.Errorf("--since: %w", err)}
		}
	}
	if f.until != "" {
		if s.Until, err = filter.ParseTime(f.until, now); err != nil {
			return s, &usageError{fmt.Errorf("--until: %w", err)}
		}
	}
	if !s.Since.IsZero() && !s.Until.IsZero() && !s.Since.Before(s.Until) {
		return s, &usageError{fmt.Errorf("--since must be before --until")}
	}
	return s, nil
}

// backupLong is quak backup's --help text, before its exit codes.
const backupLong = `Back up every album the account can see (owned, shared with you, hidden,
archived) into DIR, which must exist. Each new file is downloaded once,
decrypted and checked against Ente's hash while it streams, and only then
given its name: DIR/<album>/<title>, with a sidecar in DIR/<album>/.meta/.
A file in several albums is downloaded once and hard-linked into the others.
Edits to captions, dates or locations rewrite the sidecar without a download.
--xmp adds NAME.EXT.xmp beside every file, --sidecars takeout writes Google
Takeout's JSON there instead of .meta/, and --date-view YYYY/MM keeps a
second tree of hard links by date under "By date/"; these are remembered
for DIR, and changing one converts the backup in place, downloading nothing.
Files deleted on the server are reported and kept. An existing ` + "`ente export`" + `
folder is recognised: its files are checked, not downloaded again.

Run it by hand or from cron; it is safe to interrupt at any moment (the next
run resumes), and a second run on the same DIR waits for nothing: it exits 4.
Every run that starts records its summary in DIR/.quak/last-run.json, which
quak status reads.

With several accounts logged in, --account EMAIL says whose backup DIR is.
Every folder a run backs up is recorded as its account's, so later runs
need not say it, and --all backs up every folder recorded, one after
another, each with its account's session and its own lock: one folder's
failure never stops the others, and one health-check ping covers the whole
run.

A first backup into a folder inside another backup (an album folder), or
into one that holds other backups up to three folders down, is refused
(exit 5), naming them: --allow-nested insists.

With --link-file FILE (or --link URL, which others can see in ps), DIR is
the backup of one album shared as an Ente public link, with no account:
the folder keeps the link, with its password's token, in DIR/.quak/link.json
(mode 0600), so later runs and --all need only DIR. A link whose owner
turned downloads off is refused (exit 7); a password is asked once (or read
from --password-file); at most 4 files download at once unless
--concurrency says more. See docs/links.md.

--notify-command CMD (or $QUAK_NOTIFY_COMMAND) runs CMD in the shell after
every run, refused ones too (and as it starts, with --notify-start), with
how it ended in QUAK_EVENT, QUAK_EXIT_CODE, QUAK_SUMMARY, QUAK_NEW,
QUAK_FAILED, ... (docs/scripting.md); --notify-url URL (better
$QUAK_NOTIFY_URL or --notify-url-file) posts the same as JSON. Each is
stopped after 30 seconds; a notification that fails is reported and never
changes how the run ends.

With --every DURATION (6h, 1d) quak keeps running, for a container or a
service: it backs up at once, then again DURATION after each run started
(plus up to a tenth of it, at most 5 minutes, at random), never two runs
at once, until SIGTERM or Ctrl-C, which stop a run in progress as they
would any run. Each run pings, records and notifies as a run of its own.
A run that could not reach the server (75) is tried again after 1 minute,
then 2, 4, ... (never later than DURATION); any other failure is reported
and the loop goes on, so the health check and quak status see it.

`

func newBackupCmd(d deps) *cobra.Command {
	o := &backupOpts{}
	c := &cobra.Command{
		Use:   "backup DIR",
		Short: "Bring DIR up to date with everything the account can see",
		Long: backupLong + exitHelp(map[int]string{
			exitOK:          "everything saved",
			exitPartial:     "some files failed (named on stderr; retried first on the next run)",
			exitLocked:      "another quak run holds DIR's lock",
			exitUnusableDir: "DIR is unusable: missing, not writable, or the backup of another account or link",
			exitNoDownload:  "",
			exitTempFail: "the server or its object store could not be reached (refused, or several files in a row " +
				"could not connect): the run stopped at once, files not tried are not failed; try again later",
			exitFatal: "", exitLogin: "", exitUsage: albumsUsageHelp, exitInterrupt: "", exitTerminated: "",
		}) + "\n\n" + allOrderText(),
		Args: o.multi.args("backup"),
		RunE: func(c *cobra.Command, args []string) error {
			o.fs = c.Flags()
			once := func(ctx context.Context, d deps) error {
				if o.multi.all {
					return runBackupAll(ctx, d, o)
				}
				return runBackup(ctx, d, o, args[0])
			}
			if o.every > 0 {
				return runEvery(c.Context(), c, d, o, once)
			}
			return once(c.Context(), d)
		},
	}
	o.register(c.Flags())
	return c
}

func runBackup(ctx context.Context, d deps, o *backupOpts, dir string) (err error) {
	if err := o.check(); err != nil {
		return err
	}
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	filters, err := o.filters.set(now())
	if err != nil {
		return err
	}
	views, err := o.views.views(d, o.fs, dir)
	if err != nil {
		return err
	}
	out, err := startOutput(ctx, d, o, dir)
	if err != nil {
		return err
	}
	var sum *backup.Summary
	defer func() { out.finish(ctx, d, o, dir, sum, err) }()
	if !o.init {
		if err := needFolder(dir); err != nil {
			return err
		}
	}
	rs, err := backupSource(ctx, d, o, dir)
	if err != nil {
		return err
	}
	out.who = rs.who
	redo, err := verifyFirst(ctx, d, o, dir, out.pr)
	if err != nil {
		return err
	}
	bo := backupOptions(d, o, dir, rs, out.pr)
	bo.Filter, bo.Views, bo.Redownload = filters, views, redo
	// Every folder an account backs up is recorded as its, for --all and
	// for runs that do not say whose it is: as its run starts, so that
	// quak status --all sees a very first run in progress.
	started := bo.Started
	bo.Started = func() error {
		if started != nil {
			if err := started(); err != nil {
				return err
			}
		}
		if !o.dryRun {
			if err := registerFolder(d, dir, rs.who); err != nil {
				out.pr.warn("could not record the folder's account in the config: " + err.Error())
			}
		}
		return nil
	}
	sum, err = backup.Run(ctx, bo)
	if rs.who.Email != "" {
		err = loginNeeded(err, rs.who.Email, rs.who.Endpoint) // the server refused the session
	}
	if err != nil {
		return err
	}
	if n := sum.Failed + sum.AlbumsFailed; n > 0 {
		return &partialError{files: sum.Failed, albums: sum.AlbumsFailed}
	}
	return nil
}

// register adds backup's flags to f.
func (o *backupOpts) register(f *pflag.FlagSet) {
	f.IntVar(&o.concurrency, "concurrency", 0, "files to download at once (default 0: found from the connection, up to 32; 4 for a public link)")
	f.IntVar(&o.attempts, "attempts", retry.Default().MaxAttempts, "attempts per file and request before giving up until the next run")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout, one per decision, then a summary (human lines stay on stderr)")
	registerPing(f, &o.healthURL, &o.healthFile)
	f.BoolVar(&o.verify, "verify", false, "first re-hash the whole backup (quak verify) and download again what is missing or changed")
	f.BoolVar(&o.init, "init", false, "create DIR if it is missing (otherwise a missing DIR is refused: an unmounted disk must not fill /)")
	f.BoolVar(&o.noSpace, "no-space-check", false, "do not refuse to start when the new files look larger than the free space")
	f.BoolVar(&o.nested, "allow-nested", false, "let a first backup go into a folder inside another backup, or above one")
	f.BoolVar(&o.dryRun, "dry-run", false, "say everything this run would do, writing nothing (no file, no state, no lock; exits 4 while a backup runs)")
	f.BoolVar(&o.metaOnly, "metadata-only", false, "refresh sidecars, album files, names and mtimes from a full listing; download nothing")
	f.Int64Var(&o.resumeAbove, "resume-above", backup.DefaultResumeAbove, "bytes: larger downloads keep a resume point every this many bytes, for the next run (-1: never)")
	f.BoolVar(&o.prune, "prune", false, "move files and albums deleted on the server to DIR/.quak/trash/<date>/ (after a complete listing only)")
	f.IntVar(&o.maxDelete, "max-delete", backup.DefaultMaxDelete, "with --prune: move nothing when more than this many album entries were deleted")
	f.IntVar(&o.streams, "streams", 0, "ranges of one file over 32 MiB in flight at once, 1 to 16 (1: one stream; without it, as many as pay, found from the connection, up to 8)")
	f.Lookup("streams").DefValue = "found" // what no number says
	f.Var(&o.bwlimit, "bwlimit", "cap all downloads together at RATE bytes a second (10M is 10 MiB/s), or by a timetable of local times such as \"08:00,512K 23:00,off\"")
	o.filters.register(f)
	o.views.register(f)
	o.net.register(f)
	o.multi.register(f, "back up")
	o.link.register(f)
	o.notify.register(f)
	registerEvery(f, &o.every)
}

// askedStreams is --streams as given, or 0 when it was not: the number of
// ranges is then found from the connection.
func (o *backupOpts) askedStreams() int {
	if !o.streamsGiven() {
		return 0
	}
	return o.streams
}

// streamsGiven reports whether --streams was given.
func (o *backupOpts) streamsGiven() bool { return o.fs != nil && o.fs.Changed("streams") }

// check refuses flags out of their range, and a dry run that would write.
func (o *backupOpts) check() error {
	if err := o.link.check(o.multi.all); err != nil {
		return err
	}
	if err := firstError(atLeast("concurrency", o.concurrency, 0), atLeast("attempts", o.attempts, 1),
		atLeast("max-delete", o.maxDelete, 1)); err != nil {
		return err
	}
	if o.streamsGiven() {
		if err := inRange("streams", o.streams, 1, maxStreams); err != nil {
			return err
		}
	}
	if o.dryRun && (o.verify || o.init) {
		return &usageError{fmt.Errorf("--dry-run writes nothing, so it cannot --verify (which records what it checked) or --init")}
	}
	return checkEvery(o)
}

// runOutput is where a backup run speaks: the printer (and JSON lines),
// the log file, the health-check pings and the notifications.
type runOutput struct {
	pr     *printer
	lf     *logFile
	ping   *pinger
	notify *notifier
	// who is the run's account once known (nil before, or for a run
	// refused before it was known).
	who *account.Account
}

// startOutput opens the run's outputs and pings its start.
func startOutput(ctx context.Context, d deps, o *backupOpts, dir string) (*runOutput, error) {
	var jl *jsonLines
	if o.json {
		jl = newJSONLines(d)
	}
	lf, err := openLogFile(d, d.g.logFile, "backup", dir)
	if err != nil {
		return nil, err
	}
	pr := newPrinter(d, jl, lf)
	pr.dryRun, pr.dir = o.dryRun, dir
	url, err := healthURL(d, o.healthURL, o.healthFile)
	if err == nil && o.dryRun {
		url = "" // a preview is not a backup: no ping
	}
	var ping *pinger
	if err == nil {
		ping, err = newPinger(d, url, pr.warn)
	}
	var nt *notifier
	if err == nil && !o.dryRun && o.multi.done == nil { // an --all run notifies once, for every folder
		nt, err = newNotifier(d, &o.notify, pr.warn)
	}
	if err != nil {
		_ = lf.close()
		return nil, err
	}
	ping.start(ctx)
	out := &runOutput{pr: pr, lf: lf, ping: ping, notify: nt}
	nt.begin(ctx, startOutcome(dir, out.email(d, o, dir)))
	return out, nil
}

// email is the run's account as far as it is known: the session's once
// read, else --account, else the account DIR is recorded as.
func (out *runOutput) email(d deps, o *backupOpts, dir string) string {
	if out.who != nil {
		return out.who.Email
	}
	if o.multi.account != "" {
		return o.multi.account
	}
	if fs, _, err := loadFolders(d); err == nil {
		if abs, err := filepath.Abs(dir); err == nil {
			if f := fs.Get(abs); f != nil {
				return f.Email
			}
		}
	}
	return ""
}

// finish ends every run, started or refused, with one summary and one
// ping, and records a refusal in DIR.
func (out *runOutput) finish(ctx context.Context, d deps, o *backupOpts, dir string, sum *backup.Summary, err error) {
	defer func() { _ = out.lf.close() }()
	code := d.stopped(runExitCode(sum, err))
	out.pr.finish(sum, code, err)
	if err != nil {
		out.lf.line("quak: error: " + err.Error())
	}
	var line string
	switch {
	case sum != nil && sum.Started:
		line = outcomeFirst(code) + summaryLine(sum)
		if err != nil {
			line += "\nerror: " + fmt.Sprint(errText(err))
		}
	case err != nil:
		line = "REFUSED before it started: " + fmt.Sprint(errText(err))
		if !o.dryRun {
			recordRefusal(d, dir, code, err)
		}
	}
	endpoint := ""
	if out.who != nil {
		endpoint = out.who.Endpoint
	}
	oc := endOutcome(sum, code, err, dir, out.email(d, o, dir), endpoint)
	// Side by side: a stopped run's pings and notifications share one
	// short wait.
	var wg sync.WaitGroup
	wg.Go(func() { out.ping.finish(ctx, code, line) })
	wg.Go(func() { out.notify.end(ctx, oc) })
	wg.Wait()
	if o.multi.done != nil {
		o.multi.done(sum, code)
	}
}

// verifyFirst runs quak verify before the backup (--verify) and returns
// the files to download again; without --verify, those the last verify
// found missing or changed, which no backup has downloaded again yet.
func verifyFirst(ctx context.Context, d deps, o *backupOpts, dir string, pr *printer) ([]int64, error) {
	if !o.verify {
		rec, err := folder.At(dir).LastVerify()
		if err != nil {
			return nil, nil // none, or unreadable: status says so
		}
		if ids := rec.Pending(); len(ids) > 0 {
			pr.warn(fmt.Sprintf("%s the last verify found missing or changed: downloading them again",
				plural(len(ids), "file")))
			return ids, nil
		}
		return nil, nil
	}
	vs, err := verify.Run(ctx, verify.Options{Dir: dir, Now: d.now, Events: func(v verify.Problem) {
		pr.warn(fmt.Sprintf("verify: %s: %s", v.Kind, v.Path))
	}})
	var de *folder.DirError
	switch {
	case errors.As(err, &de) && de.Err != nil && errors.Is(de.Err, os.ErrNotExist) && dirExists(dir):
		return nil, nil // a folder with no backup yet: nothing to verify
	case err != nil:
		return nil, fmt.Errorf("verifying before the backup: %w", err)
	}
	return vs.Redownload, nil
}

// backupOptions are the backup's options from the flags and the session.
func backupOptions(d deps, o *backupOpts, dir string, rs *runSource, pr *printer) backup.Options {
	a := rs.who
	return backup.Options{
		Dir:     dir,
		Source:  rs.src,
		Started: rs.started,
		Transfer: backup.Transfer{Policy: retryPolicy(d, o.attempts), Concurrency: o.concurrency, ResumeAbove: o.resumeAbove,
			BandwidthLimit: o.bwlimit.sched, Streams: rs.streams(o.askedStreams()), MaxConcurrency: rs.maxConcurrency},
		Scope: backup.Scope{Init: o.init, DryRun: o.dryRun, MetadataOnly: o.metaOnly,
			FreeSpace: spaceCheck(d, o.noSpace), AllowNested: o.nested},
		Pruning:  backup.Pruning{Prune: o.prune, MaxDelete: o.maxDelete, Now: d.now},
		Events:   pr.event,
		FileMode: 0o666 &^ d.umask,
		Record: func(s *backup.Summary, err error) (*folder.RunRecord, bool) {
			code := d.stopped(runExitCode(s, err))
			// Only a full backup is a success: not a metadata refresh, nor
			// a --prune run that refused to prune.
			ok := code == exitOK && !o.metaOnly && s.PruneRefused == ""
			if ok {
				// It downloaded again what the last verify found damaged.
				_ = folder.At(dir).VerifyRepaired(s.Start.Add(s.Duration))
			}
			return runRecord(a, s, err, code, o.metaOnly), ok
		},
	}
}

// recordRefusal notes in DIR/.quak/last-refused.json a run refused before
// it started, so quak status does not go on calling the backup healthy.
func recordRefusal(d deps, dir string, code int, err error) {
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	f := folder.At(dir)
	_ = f.WriteRefusal(folder.Refusal{Time: folder.Seconds(now()), ExitCode: code, Error: fmt.Sprint(errText(err)), Version: quakVersion()})
}

// spaceCheck is how backup learns the free space, or nil for no check.
func spaceCheck(d deps, off bool) func(string) (int64, error) {
	switch {
	case off:
		return nil
	case d.freeSpace != nil:
		return d.freeSpace
	}
	return func(dir string) (int64, error) {
		if n := freeSpace(dir); n >= 0 {
			return n, nil
		}
		return 0, fmt.Errorf("free space unknown")
	}
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// runExitCode is the code a backup run ends with.
func runExitCode(s *backup.Summary, err error) int {
	if err != nil {
		return exitCodeFor(err)
	}
	if s != nil && s.Failed+s.AlbumsFailed > 0 {
		return exitPartial
	}
	return exitOK
}

// maxRecordedFailures caps the failures kept in last-run.json.
const maxRecordedFailures = 1000

// maxStreams is the most ranges of one file --streams allows.
const maxStreams = 16

// runRecord is the folder's record of a run: the JSON summary plus who,
// when and how it ended, for quak status.
func runRecord(a *account.Account, s *backup.Summary, err error, code int, metaOnly bool) *folder.RunRecord {
	failures := s.Failures
	if len(failures) > maxRecordedFailures {
		failures = failures[:maxRecordedFailures]
	}
	return &folder.RunRecord{
		Started: s.Started, Counts: countsOf(s), Reasons: reasonsOf(s), Bytes: s.Bytes, Duration: s.Duration.Seconds(),
		FailedIDs: failedIDs(s), ExitCode: code, Outcome: outcomeOf(code), Error: errString(err),
		Email: a.Email, UserID: a.UserID, Endpoint: a.Endpoint,
		Start: folder.Seconds(s.Start), End: folder.Seconds(s.Start.Add(s.Duration)),
		Failures: failures, PruneRefused: s.PruneRefused, TotalFiles: s.TotalFiles, TotalBytes: s.TotalBytes,
		Version: quakVersion(), MetadataOnly: metaOnly,
	}
}

// outcomeOf is how a record names the way a run with this exit code ended.
func outcomeOf(code int) string {
	switch code {
	case exitOK:
		return folder.OutcomeOK
	case exitPartial:
		return folder.OutcomePartial
	case exitInterrupt, exitTerminated:
		return folder.OutcomeInterrupted
	}
	return folder.OutcomeFailed
}

// errString is errText for a record: nil for no error.
func errString(err error) *string {
	if s, ok := errText(err).(string); ok {
		return &s
	}
	return nil
}

// partialError is a run that saved what it could but not everything.
type partialError struct{ files, albums int }

func (e *partialError) Error() string {
	var what []string
	if e.files > 0 {
		what = append(what, plural(e.files, "file"))
	}
	if e.albums > 0 {
		what = append(what, plural(e.albums, "album"))
	}
	return strings.Join(what, " and ") + " could not be backed up; the next run retries them first"
}

// openLogFile opens --log-file for appending (created 0600), its lines
// about command on folder, or returns nil for none.
func openLogFile(d deps, path, command, folder string) (*logFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log file: %w", err)
	}
	now := d.now
	if now == nil {
		now = time.Now
	}
	return &logFile{w: f, now: now, command: command, folder: folder}, nil
}
