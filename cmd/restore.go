package cmd

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/restore"
)

type restoreOpts struct {
	account  string
	dryRun   bool
	json     bool
	attempts int
	parallel int
	net      netFlags
}

// maxRestoreConcurrency caps --concurrency: more originals at once than
// this only queue behind museum's upload-URL limit.
const maxRestoreConcurrency = 16

func newRestoreCmd(d deps) *cobra.Command {
	o := &restoreOpts{}
	c := &cobra.Command{
		Use:   "restore DIR",
		Short: "Put the backup (or ente export) in DIR back into the logged-in Ente account, each file once",
		Long: `Upload the backup in DIR into the account you are logged in to (with
several, --account EMAIL says which): the same server or another one. DIR
may also be a folder written by Ente's CLI (ente export): its .meta JSON
gives each file's albums, title, dates, place and caption. Every
original comes back byte for byte, once however many albums hold it, in
the albums that held it, with its title, dates, place and caption; the
favourites, hidden albums and live photos as they were. Albums shared with
the backed-up account come back as the target's own. Thumbnails are made as
Ente's web app makes them; a video gets Ente's placeholder unless ffmpeg is
on PATH, and a HEIC unless libheif's heif-dec is.

Nothing already in the target is deleted or changed. A file the target
already has (the same content and type) is not uploaded again, only added
to the albums it is missing from: a second restore uploads nothing, and a
restore into the account that was backed up brings back only what was
deleted there. --dry-run says what would be uploaded and created.

Every upload is recorded in DIR/.quak before it is sent, so a restore is
safe to interrupt at any moment, even killed: run it again and it resends
what it recorded, never a second copy. The target's free storage is
checked first.

` + exitHelp(map[int]string{
			exitOK:          "everything restored (or, with --dry-run, planned)",
			exitPartial:     "some files could not be restored (named on stderr; the next run retries them)",
			exitLocked:      "another quak run holds DIR's lock",
			exitUnusableDir: "DIR does not exist, or holds no quak backup and no Ente export",
			exitFatal:       "the target account is out of storage, or any other fatal error",
			exitLogin:       "", exitUsage: "", exitTempFail: "", exitInterrupt: "", exitTerminated: "",
		}),
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runRestore(c.Context(), d, o, args[0]) },
	}
	f := c.Flags()
	f.StringVar(&o.account, "account", "", "restore into this logged-in account (needed with several)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be uploaded and created; change nothing")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout: one per event, then a summary")
	f.IntVar(&o.attempts, "attempts", 4, "tries per request before a file fails")
	f.IntVar(&o.parallel, "concurrency", 4, fmt.Sprintf("files to upload at once (1 to %d)", maxRestoreConcurrency))
	o.net.register(f)
	return c
}

func runRestore(ctx context.Context, d deps, o *restoreOpts, dir string) error {
	if err := firstError(atLeast("attempts", o.attempts, 1), inRange("concurrency", o.parallel, 1, maxRestoreConcurrency)); err != nil {
		return err
	}
	a, c, err := loadSessionOf(d, &o.net, o.account, "")
	if err != nil {
		return err
	}
	out := newRestoreOutput(d, o)
	sum, err := restore.Run(ctx, restore.Options{Dir: dir, DryRun: o.dryRun, Policy: retryPolicy(d, o.attempts), Now: d.now, Concurrency: o.parallel,
		Target: restore.Target{Client: c, Email: a.Email, Endpoint: a.Endpoint,
			Keys: catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey}},
		Events: out.event})
	out.finish(sum, a.Email, err)
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return &problemsError{plural(sum.Failed, "file") + " could not be restored; the next run retries them"}
	}
	return nil
}

// restoreOutput shows a restore: a bar of files on a terminal, a line per
// decision with -v or --dry-run, JSON lines with --json.
type restoreOutput struct {
	mu  sync.Mutex
	d   deps
	o   *restoreOpts
	bar *bar // nil unless on a terminal
	jl  *jsonLines
}

func newRestoreOutput(d deps, o *restoreOpts) *restoreOutput {
	out := &restoreOutput{d: d, o: o}
	if o.json {
		out.jl = newJSONLines(d)
	}
	if d.stderrIsTerminal && !d.g.quiet && !o.dryRun {
		out.bar = newByteBar(d.stderr, "restoring")
	}
	return out
}

// restoreVerbs say what each event did, and what it would do in a dry run.
var restoreVerbs = map[restore.Kind][2]string{
	restore.AlbumCreated: {"created album", "would create album"},
	restore.Uploaded:     {"uploaded", "would upload"},
	restore.Present:      {"already there", "already there"},
	restore.Added:        {"added to", "would add to"},
	restore.Placeholder:  {"placeholder thumbnail for", "placeholder thumbnail for"},
	restore.Failed:       {"failed", "failed"},
}

func (out *restoreOutput) event(e restore.Event) {
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.jl != nil {
		typ := string(e.Kind)
		if out.o.dryRun && (e.Kind == restore.Uploaded || e.Kind == restore.AlbumCreated || e.Kind == restore.Added) {
			typ = "would-" + typ
		}
		out.jl.write(typ, map[string]any{"source": e.Source, "title": e.Title, "album": e.Album, "bytes": e.Bytes, "error": errText(e.Err)})
	}
	if e.Kind == restore.Uploaded {
		out.bar.add(e.Bytes)
	}
	verb := restoreVerbs[e.Kind][0]
	if out.o.dryRun {
		verb = restoreVerbs[e.Kind][1]
	}
	switch {
	case e.Kind == restore.Failed:
		out.line("quak: %s: %s: %v", verb, e.Title, e.Err)
	case e.Kind == restore.Placeholder && !out.d.g.quiet:
		out.line("quak: %s %s: %v", verb, e.Title, e.Err)
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

func (out *restoreOutput) line(format string, args ...any) {
	out.bar.above(out.d.stderr, shownf(format, args...))
}

// finish prints the summary: a line on stdout (none with -q), or the JSON
// summary.
func (out *restoreOutput) finish(s *restore.Summary, email string, err error) {
	out.bar.finish()
	if s == nil {
		s = &restore.Summary{}
	}
	if out.jl != nil {
		code := exitCodeFor(err)
		if err == nil && s.Failed > 0 {
			code = exitPartial
		}
		out.jl.write("summary", map[string]any{"account": email, "dryRun": out.o.dryRun, "files": s.Files,
			"uploaded": s.Uploaded, "present": s.Present, "added": s.Added, "albumsCreated": s.AlbumsCreated,
			"bytes": s.Bytes, "failed": s.Failed, "leftOut": s.LeftOut, "placeholders": s.Placeholders,
			"error": errText(err), "exitCode": code})
		return
	}
	if out.d.g.quiet || (err != nil && s.Files == 0) {
		return // a restore refused before it planned anything says only why
	}
	verb := "uploaded"
	if out.o.dryRun {
		verb = "would upload"
	}
	sayf(out.d.stdout, "%d of %d files %s to %s (%s), %d already there, %d album additions, %d albums created; %d failed\n",
		s.Uploaded, s.Files, verb, email, humanBytes(s.Bytes), s.Present, s.Added, s.AlbumsCreated, s.Failed)
	if s.LeftOut > 0 {
		fmt.Fprintf(out.d.stdout, "%s in the backup left out: not saved whole, or deleted from every album before the backup\n", plural(s.LeftOut, "file"))
	}
}
