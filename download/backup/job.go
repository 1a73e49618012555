package backup

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// job is what every part of a run shares: its options, the folder and its
// state, the disk it writes through, the tally, the names taken, the
// albums recorded, and the views each commit keeps in step.
type job struct {
	o      *Options
	dir    string // DIR, absolute
	tmp    string // DIR/.quak/tmp: every file being written
	st     *state.Store
	disk   disk
	tally  *tally
	names  *names
	colls  map[int64]*state.Collection // the albums recorded; sync adds to it
	views  *viewer
	placer *placer // forgets what each commit records
	down   *outage
	policy retry.Policy // retries tell the tally
}

// emit tells an event.
func (j *job) emit(e Event) { j.tally.emit(e) }

// commit brings the views of files in line with their records, syncs the
// folders written since the last commit, then records files and the
// album in one transaction: the state never points at a name that a crash
// could still take back.
func (j *job) commit(files []*state.File, c *state.Collection) error {
	j.placer.forget(files)
	if err := j.views.apply(files, c); err != nil {
		return err
	}
	if err := j.disk.sync(); err != nil {
		return err
	}
	return j.st.Commit(files, c)
}

// albumDir is the album's folder, created if needed and checked to be
// inside the backup folder.
func (j *job) albumDir(c *state.Collection) (string, error) {
	dir, err := layout.Join(j.dir, c.Folder)
	if err != nil {
		return dir, err
	}
	return dir, j.disk.mkdirAll(dir, 0o755)
}

// partsExist reports whether every part of entry e is in c's folder.
func (j *job) partsExist(c *state.Collection, e *state.Entry) bool {
	dir, err := j.albumDir(c)
	if err != nil || len(e.Parts) == 0 {
		return false
	}
	for _, p := range e.Parts {
		if !j.disk.exists(filepath.Join(dir, p)) {
			return false
		}
	}
	return true
}

// source finds a current saved copy of the file whose parts exist on disk,
// and its folder.
func (j *job) source(sf *state.File) (*state.Entry, string) {
	for cid, e := range sf.Entries {
		c := j.colls[cid]
		if c == nil || e.Stale || !j.partsExist(c, e) {
			continue
		}
		if dir, err := j.albumDir(c); err == nil {
			return e, dir
		}
	}
	return nil, ""
}

// diskError turns a full or read-only file system into the *DirError that
// stops the run, and returns other errors as they are.
func (j *job) diskError(err error) error {
	var de *DirError
	if errors.As(err, &de) {
		return err // already says so: wrapping again would repeat it
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS} {
		if errors.Is(err, e) {
			return &DirError{Dir: j.o.Dir, Reason: "is full or read-only; the run stopped", Err: err}
		}
	}
	return err
}

// fatal reports errors that stop the whole run: a dead session, a
// cancelled run, a server that cannot be reached, and a backup folder that
// is full or read-only (every further file would fail the same way).
func fatal(ctx context.Context, err error) bool {
	var de *DirError
	var ue *UnreachableError
	return errors.Is(err, errs.ErrNotLoggedIn) || ctx.Err() != nil || errors.As(err, &de) || errors.As(err, &ue)
}

func isDirError(err error) bool {
	var de *folder.DirError
	return errors.As(err, &de)
}

func saved(f *state.File) bool { return f.Status == state.Saved || f.Status == state.HashMismatch }
