package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/quak-photos/quak/download/backup"
)

// printer shows a backup's events: on a terminal a progress bar on stderr
// with failures above it; otherwise (cron) one line per failure. Both end
// with a summary on stdout.
type printer struct {
	d     deps
	bar   *progressbar.ProgressBar
	files int
	done  int
	total int64
}

func newPrinter(d deps) *printer {
	p := &printer{d: d}
	if d.stderrIsTerminal {
		p.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(d.stderr),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetDescription("backing up"),
		)
	}
	return p
}

// event is called by the backup, one call at a time.
func (p *printer) event(e backup.Event) {
	switch e.Kind {
	case backup.Planned:
		p.files += e.Files
		p.total += e.Bytes
		if p.bar != nil {
			p.bar.ChangeMax64(p.total)
			p.describe()
		}
	case backup.Progress:
		if p.bar != nil {
			_ = p.bar.Add64(e.Bytes)
		}
	case backup.FileSaved:
		p.done++
		if p.bar != nil {
			p.describe()
		}
	case backup.FileFailed:
		p.done++
		p.line("failed: %s / %s (file %d): %v", e.Album, orUnknown(e.Title), e.FileID, e.Err)
	case backup.HashMismatch:
		p.line("kept, but its content does not match Ente's hash: %s", e.Path)
	case backup.AlbumFailed:
		p.line("album %s (%d) could not be read: %v", orUnknown(e.Album), e.CollectionID, e.Err)
	case backup.Retrying:
		p.line("attempt %d failed, retrying in %s: %v", e.Attempt, e.Delay.Round(100*time.Millisecond), e.Err)
	case backup.AlbumDeleted:
		p.line("album deleted on the server, folder kept: %s", e.Path)
	}
}

func (p *printer) describe() {
	p.bar.Describe(fmt.Sprintf("files %d/%d", p.done, p.files))
}

// line prints a message on stderr, above the bar on a terminal.
func (p *printer) line(format string, args ...any) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintf(p.d.stderr, "quak: "+format+"\n", args...)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown title)"
	}
	return s
}

// finish ends the bar and prints the summary.
func (p *printer) finish(s *backup.Summary) {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	if s == nil {
		return
	}
	writeSummary(p.d.stdout, s)
}

func writeSummary(w io.Writer, s *backup.Summary) {
	fmt.Fprintf(w, "%d new, %d linked, %d adopted, %d metadata updates, %d unchanged, %d failed, %d deleted on server",
		s.New, s.Linked, s.Adopted, s.Updated, s.Unchanged, s.Failed, s.DeletedOnServer)
	if s.HashMismatches > 0 {
		fmt.Fprintf(w, ", %d hash mismatches", s.HashMismatches)
	}
	if s.AlbumsDeleted+s.AlbumsFailed > 0 {
		fmt.Fprintf(w, ", %d albums deleted, %d albums failed", s.AlbumsDeleted, s.AlbumsFailed)
	}
	fmt.Fprintf(w, "; %s in %s\n", humanBytes(s.Bytes), s.Duration.Round(time.Millisecond))
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
