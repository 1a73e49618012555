package cmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/restore"
)

type restoreOpts struct {
	account  string
	endpoint string
	dryRun   bool
	json     bool
	yes      bool
	attempts int
	parallel int
	journal  string
	albums   []string
	exclude  []string
	noShared bool
	sharedOn bool // --no-shared was given
	net      netFlags
}

// maxRestoreConcurrency caps --concurrency: more originals at once than
// this only queue behind museum's upload-URL limit.
const maxRestoreConcurrency = 16

const restoreLong = `Upload the backup in DIR into the account you are logged in to (with
several, --account EMAIL says which, and --endpoint URL on which server when
one email is logged in on two): the same server or another one. DIR may
also be a folder written by Ente's CLI (ente export) or desktop app: its
JSON gives each file's albums, title, dates, place and caption. Every
original comes back byte for byte, once however many albums hold it, in the
albums that held it, with its title, dates, place and caption; the
favourites, hidden albums and live photos as they were. Thumbnails are made
as Ente's web app makes them; a video gets Ente's placeholder unless ffmpeg
is on PATH, and a HEIC unless libheif's heif-dec is (said first, with how
many files).

First it says what it restores into which account, and how many files that
account holds. A restore into an account that holds files and is not the
one backed up asks first on a terminal, and is refused without one, unless
--yes. A restore into the account that was backed up brings back only what
was deleted there, and only what it owned: albums others share with it are
left out (named) unless --no-shared=false; into another account they come
back as its own, unless --no-shared. --albums and --exclude-albums choose
albums by name (glob) or id, as for backup. A backup whose runs never
completed is said to be so first.

Nothing already in the target is deleted or changed. A file the target
already has (the same content, type and name) is not uploaded again, only
added to the albums it is missing from: a second restore uploads nothing.
--dry-run says what would be uploaded and created, and how many bytes.

Every upload is recorded in a journal before it is sent, so a restore is
safe to interrupt at any moment, even killed: run it again and it resends
what it recorded, never a second copy. The journal is kept in DIR/.quak; a
DIR that cannot be written (a snapshot, a read-only mount) keeps it in the
config folder instead, where the next restore of the same backup into the
same account finds it, wherever the backup is mounted then (--journal DIR
keeps it in DIR). A record is only a hint: a file deleted in the target
since comes back. The target's free storage is checked first.

`

func newRestoreCmd(d deps) *cobra.Command {
	o := &restoreOpts{}
	c := &cobra.Command{
		Use:   "restore DIR",
		Short: "Put the backup (or ente export) in DIR back into the logged-in Ente account, each file once",
		Long: restoreLong + exitHelp(map[int]string{
			exitOK:          "everything restored (or, with --dry-run, planned)",
			exitPartial:     "some files could not be restored (named on stderr; the next run retries them)",
			exitLocked:      "another quak run holds DIR's lock, or the journal's",
			exitUnusableDir: "DIR does not exist, or holds no quak backup and no Ente export",
			exitUsage:       "a bad command line, an --albums pattern that matches no album, or a restore into an account that holds files refused without --yes",
			exitFatal:       "the target account is out of storage, the restore was declined when asked, or any other fatal error",
			exitTempFail: "the server or its object store could not be reached (the run stopped at once, files not tried are not failed), " +
				"or the server refused upload URLs for ten minutes in a row (its rate limit): try again later",
			exitLogin: "", exitInterrupt: "", exitTerminated: "",
		}),
		Args: cobra.MatchAll(cobra.ExactArgs(1), func(_ *cobra.Command, args []string) error { return folderNamed(args) }),
		RunE: func(c *cobra.Command, args []string) error {
			o.sharedOn = c.Flags().Changed("no-shared")
			return runRestore(c.Context(), d, o, args[0])
		},
	}
	f := c.Flags()
	f.StringVar(&o.account, "account", "", "restore into this logged-in account (needed with several)")
	f.StringVar(&o.endpoint, "endpoint", "", "restore into the account logged in on this server (when one email is logged in on several)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be uploaded and created; change nothing")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout: what it is about to do, one line per event, then a summary")
	f.BoolVar(&o.yes, "yes", false, "restore into an account that holds files and is not the one backed up without asking")
	f.IntVar(&o.attempts, "attempts", 4, "tries per request before a file fails")
	f.IntVar(&o.parallel, "concurrency", 4, fmt.Sprintf("files to upload at once (1 to %d)", maxRestoreConcurrency))
	f.StringVar(&o.journal, "journal", "", "keep the restore's journal in this folder, not in DIR/.quak")
	f.StringArrayVar(&o.albums, "albums", nil, "only these albums (name glob, case-insensitive, or id; repeatable)")
	f.StringArrayVar(&o.exclude, "exclude-albums", nil, "not these albums (name glob or id; repeatable)")
	f.BoolVar(&o.noShared, "no-shared", false, "leave out albums others shared with the backed-up account (the default into that account itself)")
	o.net.register(f)
	return c
}

func runRestore(ctx context.Context, d deps, o *restoreOpts, dir string) error {
	if err := firstError(atLeast("attempts", o.attempts, 1), inRange("concurrency", o.parallel, 1, maxRestoreConcurrency)); err != nil {
		return err
	}
	albums := filter.Albums{Include: o.albums, Exclude: o.exclude}
	if err := albums.Validate(); err != nil {
		return &usageError{err}
	}
	journals, always, err := restoreJournals(d, o)
	if err != nil {
		return err
	}
	a, c, err := restoreSession(d, o)
	if err != nil {
		return err
	}
	out := newRestoreOutput(d, o)
	shared := restore.SharedAuto
	if o.sharedOn {
		shared = restore.SharedTake
		if o.noShared {
			shared = restore.SharedLeave
		}
	}
	sum, err := restore.Run(ctx, restore.Options{Dir: dir, DryRun: o.dryRun, Policy: retryPolicy(d, o.attempts), Now: d.now, Concurrency: o.parallel,
		Target: restore.Target{Client: c, Email: a.Email, Endpoint: a.Endpoint,
			Keys: catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey}},
		Journals: journals, JournalsAlways: always, Albums: albums, Shared: shared,
		Events: out.event, Progress: out.progress, Confirm: func(pv *restore.Preview) error { return out.confirm(ctx, pv, dir) }})
	err = restoreError(err)
	out.finish(sum, a.Email, err)
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return &problemsError{plural(sum.Failed, "file") + " could not be restored; the next run retries them"}
	}
	return nil
}

// restoreJournals is where journals kept outside the source go: --journal,
// always, else the config folder's restore-journals, when the source
// cannot be written.
func restoreJournals(d deps, o *restoreOpts) (string, bool, error) {
	if o.journal != "" {
		abs, err := filepath.Abs(o.journal)
		return abs, true, err
	}
	cfg, err := configDir(d.getenv)
	if err != nil {
		return "", false, err
	}
	return filepath.Join(cfg, "restore-journals"), false, nil
}

// restoreSession is the session restore writes into: the one --account
// and --endpoint (each optional) leave. Errors: errs.ErrNotLoggedIn when
// none does, a usage error when several do.
func restoreSession(d deps, o *restoreOpts) (*account.Account, *apiclient.Client, error) {
	ss, path, err := loadSessions(d)
	if err != nil {
		return nil, nil, err
	}
	var found []account.Account
	for _, a := range ss.List {
		if (o.account == "" || account.SameEmail(a.Email, o.account)) && (o.endpoint == "" || account.SameEndpoint(a.Endpoint, o.endpoint)) {
			found = append(found, a)
		}
	}
	switch {
	case len(ss.List) == 0:
		return nil, nil, fmt.Errorf("%w (no session at %s)", errs.ErrNotLoggedIn, path)
	case len(found) == 0:
		return nil, nil, fmt.Errorf("%w (no session for %s)", errs.ErrNotLoggedIn, strings.TrimSpace(o.account+orEmpty(" on ", o.endpoint)))
	case len(found) > 1 && o.account == "" && o.endpoint == "":
		return nil, nil, &usageError{errSeveralAccounts}
	case len(found) > 1:
		var where []string
		for _, a := range found {
			where = append(where, a.Email+" on "+a.Endpoint)
		}
		return nil, nil, &statusError{code: exitUsage, msg: "several logged-in accounts match: " + strings.Join(where, ", "),
			hint: "say which with --account EMAIL and --endpoint URL; `quak accounts` lists them"}
	}
	c, err := o.net.client(d, found[0].Endpoint)
	if err != nil {
		return nil, nil, err
	}
	return &found[0], c.WithToken(found[0].Token), nil
}

// restoreError gives restore's own errors their exit codes and hints.
func restoreError(err error) error {
	var rl *restore.RateLimitError
	if errors.As(err, &rl) {
		return &statusError{code: exitTempFail, msg: err.Error(), hint: "try again later; the next run carries on where this one stopped"}
	}
	return err
}

// errDeclined ends a restore the person at the terminal said no to.
var errDeclined = errors.New("not restored: nothing was sent")

// restoreOutput shows a restore: a bar of bytes on a terminal, a line per
// decision with -v or --dry-run, JSON lines with --json.
type restoreOutput struct {
	mu    sync.Mutex
	d     deps
	o     *restoreOpts
	bar   *bar       // nil unless on a terminal, and before confirm
	barMu sync.Mutex // guards bar
	jl    *jsonLines
	pv    *restore.Preview
	// refused: the run ended at confirm, before anything was sent.
	refused bool
}

func newRestoreOutput(d deps, o *restoreOpts) *restoreOutput {
	out := &restoreOutput{d: d, o: o}
	if o.json {
		out.jl = newJSONLines(d)
	}
	return out
}

// startBar draws, on a terminal, a bar toward the bytes to upload, with
// its percent and time left.
func (out *restoreOutput) startBar(total int64) {
	if out.d.stderrIsTerminal && !out.d.g.quiet && !out.o.dryRun {
		b := newBar(out.d.stderr, total, "restoring", progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
		b.tick() // drawn at once: its total says what is to come
		out.barMu.Lock()
		out.bar = b
		out.barMu.Unlock()
	}
}

// restoreVerbs say what each event did, and what it would do in a dry run.
var restoreVerbs = map[restore.Kind][2]string{
	restore.AlbumCreated: {"created album", "would create album"},
	restore.Uploaded:     {"uploaded", "would upload"},
	restore.Present:      {"already there", "already there"},
	restore.Added:        {"added to", "would add to"},
	restore.Placeholder:  {"placeholder thumbnail for", "placeholder thumbnail for"},
	restore.Failed:       {"failed", "failed"},
	restore.Restarted:    {"starting again", "starting again"},
}

func (out *restoreOutput) event(e restore.Event) {
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.jl != nil {
		typ := string(e.Kind)
		if out.o.dryRun && (e.Kind == restore.Uploaded || e.Kind == restore.AlbumCreated || e.Kind == restore.Added) {
			typ = "would-" + typ
		}
		fields := map[string]any{"source": e.Source, "title": e.Title, "album": e.Album, "bytes": e.Bytes, "error": errText(e.Err)}
		if e.Kind == restore.Waiting {
			fields = map[string]any{"seconds": e.Wait.Seconds(), "error": errText(e.Err)}
		}
		out.jl.write(typ, fields)
	}
	verb := restoreVerbs[e.Kind][0]
	if out.o.dryRun {
		verb = restoreVerbs[e.Kind][1]
	}
	switch {
	case e.Kind == restore.Failed:
		out.line("quak: %s: %s: %v", verb, e.Title, e.Err)
	case e.Kind == restore.Waiting && !out.d.g.quiet:
		out.line("quak: the server takes no more upload URLs for now (its limit a minute); waiting, asking again every %s", e.Wait.Round(time.Second))
	case e.Kind == restore.Waiting:
	case e.Kind == restore.Restarted && out.d.g.verbose:
		out.line("%s %s: %v", verb, e.Title, e.Err)
	case e.Kind == restore.Placeholder && out.d.g.verbose:
		out.line("quak: %s %s: %v", verb, e.Title, e.Err)
	case e.Kind == restore.Placeholder, e.Kind == restore.Restarted:
	case out.o.dryRun && !out.d.g.quiet, out.d.g.verbose:
		what := e.Title
		switch e.Kind {
		case restore.AlbumCreated:
			what = e.Album
		case restore.Added:
			what = e.Title + " → " + e.Album
		}
		out.line("%s %s", verb, what)
	}
}

// progress moves the bar by n bytes sent.
func (out *restoreOutput) progress(n int64) { out.currentBar().add(n) }

func (out *restoreOutput) line(format string, args ...any) {
	out.currentBar().above(out.d.stderr, shownf(format, args...))
}

// currentBar is the bar, once drawn (nil before, and without a terminal).
func (out *restoreOutput) currentBar() *bar {
	out.barMu.Lock()
	defer out.barMu.Unlock()
	return out.bar
}

// confirm says what the run is about to do, before anything is sent, and
// asks before writing into an account that holds files and is not the one
// backed up (on a terminal; without one, it refuses unless --yes).
func (out *restoreOutput) confirm(ctx context.Context, pv *restore.Preview, dir string) error {
	out.mu.Lock()
	out.pv = pv
	out.mu.Unlock()
	if out.jl != nil {
		out.jl.write("preview", previewJSON(pv))
	}
	for _, l := range previewLines(pv, dir) {
		if !out.d.g.quiet || strings.HasPrefix(l, "WARNING") {
			out.line("%s", l)
		}
	}
	if pv.DryRun || pv.Same || pv.ToFiles == 0 || pv.Resuming || out.o.yes {
		out.startBar(pv.Bytes)
		return nil
	}
	what := fmt.Sprintf("%s on %s already holds %s and is not the account the backup is of", pv.ToEmail, pv.ToEndpoint, plural(pv.ToFiles, "file"))
	if pv.From.Kind != restore.FromBackup {
		what = fmt.Sprintf("%s on %s already holds %s", pv.ToEmail, pv.ToEndpoint, plural(pv.ToFiles, "file"))
	}
	out.refused = true
	if out.d.readPassword == nil {
		return &statusError{code: exitUsage, msg: what + "; not restoring into it without --yes",
			hint: "check --account and --endpoint; add --yes to restore into it anyway"}
	}
	p := newPrompter(out.d, "")
	answer, err := readLineOrCancel(ctx, func() (string, error) { return p.line(what + ". Restore into it? [y/N] ") })
	if err != nil {
		return err
	}
	if a := strings.ToLower(answer); a != "y" && a != "yes" {
		return errDeclined
	}
	out.refused = false
	out.startBar(pv.Bytes)
	return nil
}

// readLineOrCancel is read's answer, or ctx's error as soon as it ends.
func readLineOrCancel(ctx context.Context, read func() (string, error)) (string, error) {
	b, err := readOrCancel(ctx, func() ([]byte, error) {
		s, err := read()
		return []byte(s), err
	}, func() {})
	return string(b), err
}

// previewLines say, before anything is sent, what is restored into what,
// and what stands in the way of a restore as complete as the source.
func previewLines(pv *restore.Preview, dir string) []string {
	var lines []string
	from := fmt.Sprintf("the %s in %s", pv.From.Kind, dir)
	if pv.From.Email != "" {
		from = fmt.Sprintf("%s on %s (the %s in %s)", pv.From.Email, pv.From.Endpoint, pv.From.Kind, dir)
	}
	into := fmt.Sprintf("%s on %s, which holds %s", pv.ToEmail, pv.ToEndpoint, plural(pv.ToFiles, "file"))
	verb := "Restoring"
	if pv.DryRun {
		verb = "Would restore"
	}
	switch {
	case pv.Same:
		lines = append(lines, fmt.Sprintf("%s %s into the same account, which holds %s: only what it lacks is uploaded.", verb, from, plural(pv.ToFiles, "file")))
	default:
		lines = append(lines, fmt.Sprintf("%s %s → %s.", verb, from, into))
	}
	if in := pv.Incomplete; in != nil {
		l := "WARNING: this backup never completed a run"
		if !in.LastRun.IsZero() {
			l += fmt.Sprintf(" (its last ended %s at %s)", in.LastOutcome, in.LastRun.UTC().Format(time.RFC3339))
		}
		l += ": it may lack files the account had"
		if in.Lacking > 0 {
			l += fmt.Sprintf(", and %s it listed %s never saved", plural(in.Lacking, "file"), agreeing(in.Lacking, "was", "were"))
		}
		lines = append(lines, l+". Finish it with quak backup first, if the account is still there.")
	}
	for _, t := range pv.Tools {
		lines = append(lines, fmt.Sprintf("WARNING: %s is not on PATH: %s to upload %s Ente's black placeholder thumbnail, which Ente's apps never replace; to have real ones, install %s before they are restored.",
			t.Tool, plural(t.Files, "file"), agreeing(t.Files, "gets", "get"), t.Tool))
	}
	if len(pv.Shared) > 0 {
		lines = append(lines, fmt.Sprintf("Left out: %s others shared with the account (%s); --no-shared=false brings them back as its own.",
			plural(len(pv.Shared), "album"), strings.Join(pv.Shared, ", ")))
	}
	switch pv.JournalWhy {
	case restore.JournalReadOnly:
		lines = append(lines, fmt.Sprintf("%s cannot be written: the restore's journal is kept in %s.", dir, orDash(pv.Journal)))
	case restore.JournalFound:
		lines = append(lines, fmt.Sprintf("The restore's journal is kept in %s, where an earlier restore of this backup into this account left it.", orDash(pv.Journal)))
	}
	return lines
}

func orDash(s string) string {
	if s == "" {
		return "the config folder (made by the first real run)"
	}
	return s
}

func previewJSON(pv *restore.Preview) map[string]any {
	tools := map[string]int{}
	for _, t := range pv.Tools {
		tools[t.Tool] = t.Files
	}
	var incomplete any
	if in := pv.Incomplete; in != nil {
		m := map[string]any{"lacking": in.Lacking, "lastOutcome": in.LastOutcome, "lastRun": nil}
		if !in.LastRun.IsZero() {
			m["lastRun"] = in.LastRun.UTC()
		}
		incomplete = m
	}
	return map[string]any{"from": map[string]any{"kind": pv.From.Kind, "email": pv.From.Email, "endpoint": pv.From.Endpoint},
		"account": pv.ToEmail, "endpoint": pv.ToEndpoint, "accountFiles": pv.ToFiles, "sameAccount": pv.Same,
		"resuming": pv.Resuming, "dryRun": pv.DryRun, "toUpload": pv.Upload, "bytes": pv.Bytes, "thumbBytes": pv.ThumbBytes,
		"incomplete": incomplete, "missingTools": tools, "shared": append([]string{}, pv.Shared...), "journal": pv.Journal}
}

// finish prints the summary: a line on stdout (none with -q), led by
// INTERRUPTED, INCOMPLETE or FAILED when the run was not a success, or
// the JSON summary.
func (out *restoreOutput) finish(s *restore.Summary, email string, err error) {
	out.currentBar().finish()
	if s == nil {
		s = &restore.Summary{}
	}
	code := out.d.stopped(exitCodeFor(err))
	if err == nil && s.Failed > 0 {
		code = exitPartial
	}
	if out.jl != nil {
		out.jl.write("summary", map[string]any{"account": email, "dryRun": out.o.dryRun, "files": s.Files,
			"uploaded": s.Uploaded, "present": s.Present, "added": s.Added, "albumsCreated": s.AlbumsCreated,
			"bytes": s.Bytes, "thumbBytes": s.ThumbBytes, "failed": s.Failed, "leftOut": s.LeftOut, "filtered": s.Filtered,
			"shared": append([]string{}, s.Shared...), "placeholders": s.Placeholders,
			"error": errText(err), "exitCode": code})
		return
	}
	if out.d.g.quiet || (err != nil && s.Files == 0) || out.refused {
		return // a restore refused before it sent anything says only why
	}
	verb, thumbs := "uploaded", "and %s of thumbnails"
	if out.o.dryRun {
		verb, thumbs = "would upload", "and at most %s of thumbnails"
	}
	sayf(out.d.stdout, "%s%s %s to %s (%s, "+thumbs+"), %s; %s failed\n",
		outcomeFirst(code), ofFiles(s.Uploaded, s.Files), verb, email, humanBytes(s.Bytes), humanBytes(s.ThumbBytes), albumWork(s), counted(s.Failed))
	if s.LeftOut > 0 {
		fmt.Fprintf(out.d.stdout, "%s in the backup left out: not saved whole, or deleted from every album before the backup\n", plural(s.LeftOut, "file"))
	}
	if s.Filtered > 0 {
		fmt.Fprintf(out.d.stdout, "%s left out by the choice of albums (or as others' files)\n", plural(s.Filtered, "file"))
	}
	if s.Placeholders > 0 {
		fmt.Fprintf(out.d.stdout, "%s got Ente's placeholder thumbnail%s\n", plural(s.Placeholders, "file"), out.placeholderWhy(s.Placeholders))
	}
}

// albumWork is the part of a restore's or an import's summary on what was
// there already and what it did to albums.
func albumWork(s *restore.Summary) string {
	return counted(s.Present) + " already there, " + plural(s.Added, "album addition") + ", " + plural(s.AlbumsCreated, "album") + " created"
}

// placeholderWhy says why n files got the placeholder: the programs
// found missing at the start, and files no program reads.
func (out *restoreOutput) placeholderWhy(n int) string {
	missing := 0
	var why []string
	if out.pv != nil {
		for _, t := range out.pv.Tools {
			missing += t.Files
			why = append(why, fmt.Sprintf("%d for want of %s", t.Files, t.Tool))
		}
	}
	if missing < n {
		why = append(why, fmt.Sprintf("%d in a format no program here reads", n-missing))
	}
	return " (" + strings.Join(why, ", ") + ")"
}
