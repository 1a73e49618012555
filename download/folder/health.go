package folder

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/span"
)

// Kind says how bad a Problem is; cmd turns it into an exit code.
type Kind int

// Problem kinds, from the least to the most urgent.
const (
	// Failing: the last run failed, was partial, or was no full backup.
	Failing Kind = iota + 1
	// Stale: no fully successful run within the allowed age.
	Stale
	// LoggedOut: no session, or the server rejects it (found by the
	// caller, which asks the server).
	LoggedOut
	// Unusable: the folder cannot be used or written.
	Unusable
)

// Problem is one reason a backup is not healthy.
type Problem struct {
	Kind Kind
	Msg  string
}

// Health is what a backup folder's records say of it.
type Health struct {
	Last    *RunRecord // the last run that started
	Success *RunRecord // the last fully successful run, or nil
	Views   *ViewOptions
	// Damaged are the files the last verify found missing or changed
	// that no backup has downloaded again since.
	Damaged []Damage
	// Problems are the reasons it is not healthy, none when it is.
	Problems []Problem
}

// HealthCheck is what a verdict is drawn against.
type HealthCheck struct {
	Now    time.Time
	MaxAge time.Duration // the oldest a last fully successful run may be
	// CanWrite makes and removes a file in a folder (nil: a real temp
	// file); a folder that cannot be written is unusable.
	CanWrite func(dir string) error
}

// NoRecordError is the verdict on a folder with a state but no
// last-run.json: a first run still in progress, or a run that could not
// record how it went.
type NoRecordError struct{ InProgress bool }

func (e *NoRecordError) Error() string {
	if e.InProgress {
		return "backup not healthy yet: the first backup run is in progress and has not finished"
	}
	return "backup not healthy: the last run could not record how it went (" + lastRun + " is missing: was the disk full?)"
}

// Health reads the folder's records and draws the verdict. Errors:
// *DirError for a folder with no recorded backup, *NoRecordError,
// *RecordError for a last-run.json that does not read as a run, and
// records that cannot be read at all.
func (f *Folder) Health(hc HealthCheck) (*Health, error) {
	last, err := f.LastRun()
	if errors.Is(err, os.ErrNotExist) {
		return nil, f.noRecord()
	}
	if err != nil {
		return nil, err
	}
	h := &Health{Last: last}
	var re *RecordError
	switch h.Success, err = f.LastSuccess(); {
	case errors.As(err, &re):
		h.add(&Problem{Stale, re.Error() + ", so when a run last fully succeeded is not known; the next run that does writes it again"})
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, err
	default:
		h.staleness(hc)
	}
	h.Problems = append(h.Problems, last.problems()...)
	h.add(f.refusalProblem())
	if err := f.CheckState(); err != nil {
		h.add(&Problem{Failing, "the state database does not open: " + err.Error()})
	}
	h.add(f.writeProblem(hc.CanWrite))
	h.add(f.verifyProblem(h))
	if h.Views, err = f.ReadViewOptions(); err != nil {
		h.add(&Problem{Failing, err.Error()})
	}
	return h, nil
}

func (h *Health) add(p *Problem) {
	if p != nil {
		h.Problems = append(h.Problems, *p)
	}
}

// staleness adds a problem when the last full success is missing, in the
// future, or older than hc.MaxAge.
func (h *Health) staleness(hc HealthCheck) {
	s := h.Success
	switch {
	case s == nil:
		h.add(&Problem{Stale, "no backup run has fully succeeded yet"})
	case s.End.After(hc.Now.Add(time.Minute)):
		h.add(&Problem{Stale, fmt.Sprintf("clock skew: the last fully successful run ended %s, %s in the future",
			s.End.Format(time.RFC3339), Ago(s.End.Sub(hc.Now)))})
	case hc.Now.Sub(s.End) > hc.MaxAge:
		h.add(&Problem{Stale, fmt.Sprintf("the last fully successful run ended %s ago, more than --max-age %s",
			Ago(hc.Now.Sub(s.End)), span.Text(hc.MaxAge))})
	}
}

// problems is what a run's record says is wrong: how it ended and why,
// albums it could not list, and runs that were no full backup.
func (r *RunRecord) problems() []Problem {
	var out []Problem
	if r.Outcome == OutcomeOK && r.ExitCode != 0 {
		out = append(out, Problem{Failing, fmt.Sprintf("the last run's record contradicts itself (outcome ok, exit code %d): damaged or edited?", r.ExitCode)})
	}
	if r.Outcome != OutcomeOK {
		msg := fmt.Sprintf("the last run ended %s (exit code %d)", r.Outcome, r.ExitCode)
		if r.Error != nil && *r.Error != "" {
			msg += ": " + *r.Error
		}
		out = append(out, Problem{Failing, msg})
	}
	if n := r.Counts.AlbumsFailed; n > 0 {
		out = append(out, Problem{Failing, fmt.Sprintf("albums the last run could not list: %d", n)})
	}
	if r.MetadataOnly {
		out = append(out, Problem{Failing, "the last run was --metadata-only: it refreshed metadata and downloaded nothing, so it was no full backup"})
	}
	if r.PruneRefused != "" {
		out = append(out, Problem{Failing, "the last run's --prune was refused, so it was no full backup: " + r.PruneRefused})
	}
	return out
}

// refusalProblem reports a run refused before it started since the last
// recorded run, whose record removes it.
func (f *Folder) refusalProblem() *Problem {
	r, err := f.LastRefusal()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return &Problem{Failing, "a run was refused before it started, and its record does not read: " + err.Error()}
	}
	return &Problem{Failing, fmt.Sprintf("the last run, at %s, was refused before it started (exit code %d): %s",
		r.Time.Format(time.RFC3339), r.ExitCode, r.Error)}
}

// verifyProblem reports the files the last verify found missing or
// changed, until a backup downloads them again or a verify finds them
// whole, and keeps them in h.Damaged.
func (f *Folder) verifyProblem(h *Health) *Problem {
	rec, err := f.LastVerify()
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return &Problem{Failing, "what the last verify found does not read: " + err.Error()}
	}
	h.Damaged = rec.Open()
	if len(h.Damaged) == 0 {
		return nil
	}
	var names []string
	for i, d := range h.Damaged {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(h.Damaged)-i))
			break
		}
		names = append(names, d.Path+" ("+d.Kind+")")
	}
	return &Problem{Failing, fmt.Sprintf("quak verify found files missing or changed at %s: %s; the next backup downloads them again",
		rec.Time.Format(time.RFC3339), strings.Join(names, ", "))}
}

// writeProblem reports a .quak folder no file can be written in (a disk
// remounted read-only, say): every run would stop at once, unable to
// record even that it could not start.
func (f *Folder) writeProblem(canWrite func(string) error) *Problem {
	if canWrite == nil {
		canWrite = createIn
	}
	if err := canWrite(f.path()); err != nil {
		return &Problem{Unusable, "the backup folder cannot be written, so no backup can run or record how it went: " + err.Error()}
	}
	return nil
}

func createIn(dir string) error {
	fh, err := os.CreateTemp(dir, ".status-*")
	if err != nil {
		return err
	}
	_ = fh.Close()
	return os.Remove(fh.Name())
}

// noRecord is the verdict on a folder with no last-run.json. It takes the
// lock for an instant to tell a first run in progress from a record that
// was never written.
func (f *Folder) noRecord() error {
	if !f.HasState() {
		return f.error("has no recorded backup run (run quak backup first)", nil)
	}
	unlock, err := f.LockFor("status")
	if errors.Is(err, ErrLocked) {
		return &NoRecordError{InProgress: true}
	}
	if err == nil {
		unlock()
	}
	return &NoRecordError{}
}

// Ago is a duration as status says it: seconds, then minutes, then days.
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}
