package cmd

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
)

// printer shows a backup's events: on a terminal a progress bar on stderr
// with failures above it; otherwise (cron) one line per failure. The
// summary goes to stdout. With --json, the events go to stdout as JSON
// lines (the same events, a second reader) and the human lines, summary
// included, stay on stderr. With --log-file, every human line is also
// appended there with a timestamp.
type printer struct {
	mu    sync.Mutex // events come one at a time; warnings from elsewhere
	d     deps
	bar   *bar // nil unless on a terminal
	json  *jsonLines
	log   *logFile
	files int
	done  int
	total int64
	dir   string // the backup folder, as given
	// dryRun prints every decision, since nothing else shows them;
	// verbose (-v) too, and every retry.
	dryRun  bool
	verbose bool
}

func newPrinter(d deps, json *jsonLines, log *logFile) *printer {
	p := &printer{d: d, json: json, log: log}
	quiet := false
	if d.g != nil {
		p.verbose, quiet = d.g.verbose, d.g.quiet
	}
	if d.stderrIsTerminal && !quiet {
		p.bar = newByteBar(d.stderr, "backing up")
	}
	return p
}

// eventTypes are the JSON names of backup events; docs/scripting.md
// documents them.
var eventTypes = map[backup.Kind]string{
	backup.FileSaved:        "saved",
	backup.FileLinked:       "linked",
	backup.FileAdopted:      "adopted",
	backup.FileFailed:       "failed",
	backup.HashMismatch:     "hash-mismatch",
	backup.MetadataUpdated:  "metadata",
	backup.FileRenamed:      "renamed",
	backup.DeletedOnServer:  "deleted-on-server",
	backup.AlbumRenamed:     "album-renamed",
	backup.AlbumDeleted:     "album-deleted",
	backup.AlbumFailed:      "album-failed",
	backup.Retrying:         "retry",
	backup.LeftoversRemoved: "leftovers-removed",
	backup.Planned:          "planned",
	backup.FileSkipped:      "skipped",
	backup.FilePruned:       "pruned",
	backup.AlbumPruned:      "album-pruned",
	backup.PruneRefused:     "prune-refused",
	backup.FileWarning:      "warning",
	backup.ViewsChanged:     "views-changed",
	backup.WouldPrune:       "would-prune",
	backup.PruneKept:        "prune-kept",
	backup.FileRestored:     "restored",
	backup.LocalRestored:    "restored-local",
}

// dryTypes name, in a dry run, the events that would otherwise say
// something was done.
var dryTypes = map[backup.Kind]string{
	backup.FileSaved:       "would-save",
	backup.FileLinked:      "would-link",
	backup.FileAdopted:     "would-adopt",
	backup.MetadataUpdated: "would-update",
	backup.FileRenamed:     "would-rename",
	backup.LocalRestored:   "would-restore-local",
}

// jsonEvent writes e as one JSON object (Progress is not written: the
// byte counts are in saved events and the summary).
func (p *printer) jsonEvent(e backup.Event) {
	typ, ok := eventTypes[e.Kind]
	if !ok {
		return
	}
	if alt, ok := dryTypes[e.Kind]; ok && p.dryRun {
		typ = alt // a dry run did none of it
	}
	f := map[string]any{}
	switch e.Kind {
	case backup.Retrying:
		f["attempt"], f["delay"], f["cause"] = e.Attempt, e.Delay.Seconds(), errText(e.Err)
	case backup.LeftoversRemoved, backup.ViewsChanged:
		f["files"] = e.Files
	case backup.Planned:
		f["album"], f["files"], f["bytes"] = e.Album, e.Files, e.Bytes
	case backup.AlbumRenamed, backup.AlbumDeleted, backup.AlbumFailed, backup.AlbumPruned:
		f["collectionID"], f["album"], f["path"] = e.CollectionID, e.Album, e.Path
	case backup.PruneRefused:
		f["reason"] = errText(e.Err)
	default:
		f["fileID"], f["collectionID"], f["album"], f["title"], f["path"] = e.FileID, e.CollectionID, e.Album, e.Title, e.Path
		if e.Kind == backup.FileSaved {
			f["bytes"] = e.Bytes
		}
	}
	if e.Kind == backup.FileWarning {
		f["warning"] = errText(e.Err)
	}
	if e.Kind == backup.PruneKept {
		f["reason"] = errText(e.Err)
	}
	if e.Kind == backup.FileFailed || e.Kind == backup.AlbumFailed {
		f["reason"], f["error"] = backup.Reason(e.Err), errText(e.Err)
	}
	p.json.write(typ, f)
}

// warn prints a line from outside the backup (the health-check pinger).
func (p *printer) warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line("%s", msg)
}

// event is called by the backup, one call at a time.
func (p *printer) event(e backup.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json != nil {
		p.jsonEvent(e)
	}
	if p.dryRun || p.verbose {
		p.dryLine(e)
	}
	switch e.Kind {
	case backup.Planned:
		p.files += e.Files
		p.total += e.Bytes
		p.bar.setTotal(p.total)
		p.describe()
	case backup.Progress:
		p.bar.add(e.Bytes)
	case backup.FileSaved:
		p.done++
		p.describe()
	case backup.FileFailed:
		p.done++
		p.line("failed: %s (file %d): %v", inAlbum(e.Album, e.Title), e.FileID, e.Err)
	case backup.HashMismatch:
		p.line("kept, but its content does not match Ente's hash: %s", e.Path)
	case backup.AlbumFailed:
		p.line("album %s (%d) could not be read: %v", orUnknown(e.Album), e.CollectionID, e.Err)
	case backup.Retrying:
		if p.verbose {
			p.line("attempt %d failed, retrying in %s: %v", e.Attempt, e.Delay.Round(100*time.Millisecond), e.Err)
		}
	case backup.AlbumDeleted:
		p.line("album deleted on the server, folder kept: %s", e.Path)
	case backup.FilePruned:
		p.line("%s to the trash (deleted on the server): %s", p.verb("moved", "would move"), e.Path)
	case backup.AlbumPruned:
		p.line("album folder %s to the trash (album deleted on the server): %s", p.verb("moved", "would move"), e.Path)
	case backup.PruneRefused:
		p.line("not pruning: %v", e.Err)
	case backup.WouldPrune:
		p.line("would have moved to the trash: %s", e.Path)
	case backup.PruneKept:
		p.line("not moving %s to the trash: %v", e.Path, e.Err)
	case backup.FileRestored:
		p.line("%s from the trash (listed on the server again): %s", p.verb("moved back", "would move back"), e.Path)
	case backup.LocalRestored:
		p.line("%s (it was missing or changed here): %s", p.verb("downloaded again", "would download again"), e.Path)
	case backup.FileWarning:
		p.line("warning: %s (file %d): %v", inAlbum(e.Album, e.Title), e.FileID, e.Err)
	case backup.ViewsChanged:
		p.line("%s the sidecars and date view to the folder's options: %s changed, nothing downloaded",
			p.verb("converted", "would convert"), plural(e.Files, "file"))
	}
}

func (p *printer) verb(done, would string) string {
	if p.dryRun {
		return would
	}
	return done
}

// dryLine names what a real run would do, or (-v) did.
func (p *printer) dryLine(e backup.Event) {
	switch e.Kind {
	case backup.FileSaved:
		p.line("%s: %s (%s)", p.verb("downloaded", "would download"), e.Path, humanBytes(e.Bytes))
	case backup.FileLinked:
		p.line("%s: %s", p.verb("linked", "would link"), e.Path)
	case backup.FileAdopted:
		p.line("%s: %s", p.verb("adopted", "would adopt"), e.Path)
	case backup.MetadataUpdated:
		p.line("%s: %s", p.verb("updated the metadata of", "would update the metadata of"), e.Path)
	case backup.FileRenamed:
		p.line("%s: %s", p.verb("renamed to", "would rename to"), e.Path)
	case backup.DeletedOnServer:
		p.line("deleted on the server (kept): %s", e.Path)
	case backup.AlbumRenamed:
		p.line("%s: %s", p.verb("moved the album folder to", "would move the album folder to"), e.Path)
	case backup.FileSkipped:
		p.line("left out by the filters: %s", inAlbum(e.Album, e.Title))
	}
}

func (p *printer) describe() {
	p.bar.describe(fmt.Sprintf("files %d/%d", p.done, p.files))
}

// line prints a message on stderr, above the bar on a terminal, and logs it.
func (p *printer) line(format string, args ...any) {
	msg := "quak: " + shownf(format, args...)
	p.bar.above(p.d.stderr, msg)
	p.log.line(msg)
}

// inAlbum names a file as ALBUM / TITLE, or by its title alone when no
// one album is concerned (a view of the file, say).
func inAlbum(album, title string) string {
	if album == "" {
		return orUnknown(title)
	}
	return album + " / " + orUnknown(title)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown title)"
	}
	return s
}

// finish ends the bar and prints the summary of a run that started; a run
// refused before it started (missing folder, lock held, no session) has no
// summary, only its error. code and err are how the run ends.
func (p *printer) finish(s *backup.Summary, code int, err error) {
	p.bar.finish()
	if p.json != nil {
		f := summaryFields(s, code)
		f["dryRun"] = p.dryRun
		f["error"] = errText(err)
		p.json.write("summary", f)
	}
	if s == nil || !s.Started {
		return
	}
	out := p.d.stdout
	if p.json != nil {
		out = p.d.stderr
	}
	line := outcomeFirst(code) + summaryLine(s)
	switch {
	case p.dryRun && code == exitOK:
		line = "Dry run, nothing written; a real run would make: " + summaryLine(s)
	case p.dryRun:
		line = outcomeFirst(code) + "Dry run, nothing written; before it stopped it found: " + summaryLine(s)
	}
	fmt.Fprintln(out, line)
	p.log.line(line)
	if p.quiet() && code == exitOK && s.DeletedOnServer > 0 && p.json == nil {
		// Cron mails this: files deleted in the account (by mistake, or
		// by someone else) are worth a line even from a quiet run.
		sayf(unheld(out), "quak: %s deleted on the server since the last run of %s: %s\n",
			plural(s.DeletedOnServer, "file"), p.dir, summaryLine(s))
	}
}

// quiet reports -q: nothing is printed on success but what must be.
func (p *printer) quiet() bool { return p.d.g != nil && p.d.g.quiet }

// summaryFields is the JSON summary of a run; the folder's record of the
// run (runRecord) holds the same fields.
func summaryFields(s *backup.Summary, code int) map[string]any {
	if s == nil {
		s = &backup.Summary{}
	}
	return map[string]any{
		"started":   s.Started,
		"counts":    countsOf(s),
		"reasons":   reasonsOf(s),
		"bytes":     s.Bytes,
		"duration":  s.Duration.Seconds(),
		"failedIDs": failedIDs(s),
		"exitCode":  code,
	}
}

// countsOf are what a run did, as summaries and records count it.
func countsOf(s *backup.Summary) folder.Counts {
	return folder.Counts{
		New: s.New, Linked: s.Linked, Adopted: s.Adopted, Metadata: s.Updated, Unchanged: s.Unchanged,
		Failed: s.Failed, HashMismatches: s.HashMismatches, DeletedOnServer: s.DeletedOnServer,
		AlbumsDeleted: s.AlbumsDeleted, AlbumsFailed: s.AlbumsFailed, Skipped: s.Skipped, Pruned: s.Pruned,
		Restored: s.Restored, LeftOut: s.LeftOut, AlbumsLeftOut: s.AlbumsLeftOut, RestoredLocal: s.LocalRestored,
	}
}

func reasonsOf(s *backup.Summary) map[string]int {
	reasons := map[string]int{}
	for k, v := range s.Reasons {
		reasons[k] = v
	}
	return reasons
}

func failedIDs(s *backup.Summary) []int64 {
	failed := make([]int64, 0, len(s.Failures))
	for _, f := range s.Failures {
		failed = append(failed, f.FileID)
	}
	return failed
}

// outcomeFirst is how a run that did not succeed opens its summary, so
// the first word a person reads says so; "" for a success.
func outcomeFirst(code int) string {
	switch code {
	case exitOK:
		return ""
	case exitPartial:
		return "INCOMPLETE (exit code 2): "
	case exitInterrupt, exitTerminated:
		return fmt.Sprintf("INTERRUPTED (exit code %d): ", code)
	}
	return fmt.Sprintf("FAILED (exit code %d): ", code)
}

func summaryLine(s *backup.Summary) string {
	line := fmt.Sprintf("%d new, %d linked, %d adopted, %s, %d unchanged, %d failed, %d deleted on server",
		s.New, s.Linked, s.Adopted, plural(s.Updated, "metadata update"), s.Unchanged, s.Failed, s.DeletedOnServer)
	if s.HashMismatches > 0 {
		line += ", " + plural(s.HashMismatches, "hash mismatch", "hash mismatches")
	}
	if s.AlbumsDeleted+s.AlbumsFailed > 0 {
		line += fmt.Sprintf(", %s deleted, %s failed", plural(s.AlbumsDeleted, "album"), plural(s.AlbumsFailed, "album"))
	}
	if n := max(s.Skipped, s.LeftOut); n > 0 || s.AlbumsLeftOut > 0 {
		line += fmt.Sprintf(", %d left out by filters", n)
		if s.AlbumsLeftOut > 0 {
			line += fmt.Sprintf(" (and %s not taken)", plural(s.AlbumsLeftOut, "album"))
		}
	}
	if s.Pruned > 0 {
		line += fmt.Sprintf(", %d moved to the trash", s.Pruned)
	}
	if s.Restored > 0 {
		line += fmt.Sprintf(", %d moved back from the trash", s.Restored)
	}
	if s.LocalRestored > 0 {
		line += fmt.Sprintf(", %d restored (missing or changed here)", s.LocalRestored)
	}
	return line + fmt.Sprintf("; %s in %s", humanBytes(s.Bytes), s.Duration.Round(time.Millisecond))
}

func humanBytes(n int64) string { return backup.BytesText(n) }

// logFile appends human lines to --log-file, each with a UTC timestamp
// and the command and folder it is about ("[backup /srv/photos]"), so
// the runs of several commands and folders in one log tell apart. A nil
// *logFile logs nothing.
type logFile struct {
	mu      sync.Mutex
	w       io.WriteCloser
	now     func() time.Time
	command string // "backup", "helper fix-missing-thumbnails"
	folder  string // the folder, "--all", or "" for none
}

func (l *logFile) line(msg string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	tag := strings.TrimSpace(l.command + " " + l.folder)
	fmt.Fprintf(l.w, "%s [%s] %s\n", l.now().UTC().Format(time.RFC3339), shown(tag), shown(msg))
}

// about makes the lines that follow name folder (a run of --all).
func (l *logFile) about(folder string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.folder = folder
}

func (l *logFile) close() error {
	if l == nil {
		return nil
	}
	return l.w.Close()
}
