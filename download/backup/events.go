package backup

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

// Kind says what an Event reports.
type Kind int

// Event kinds. A printer shows them to a person; a JSON writer can log them.
const (
	FileSaved        Kind = iota + 1 // a file was downloaded, verified and saved
	FileLinked                       // a file already saved was placed in another album (hard link or copy)
	FileAdopted                      // a file already in the folder (an `ente export`) was recognised and verified
	FileFailed                       // a file could not be saved; the run goes on
	HashMismatch                     // saved, but its content is not what its metadata's hash says
	MetadataUpdated                  // a caption, date or location edit rewrote the sidecar and mtime
	FileRenamed                      // a title edit renamed the local file
	DeletedOnServer                  // removed from an album or trashed; the local copy is kept
	AlbumRenamed                     // an album's folder was moved to its new name
	AlbumDeleted                     // an album was deleted or left; its folder is kept
	AlbumFailed                      // an album could not be read; its files are retried next run
	Retrying                         // an attempt failed and will be retried
	LeftoversRemoved                 // temp files of an interrupted run were removed
	Planned                          // more work is known: Files and Bytes to download
	Progress                         // Bytes more were written
	FileSkipped                      // the run's filters left a file out; a wider run fetches it
	FilePruned                       // --prune moved an album copy deleted on the server to the trash
	AlbumPruned                      // --prune moved a deleted album's folder to the trash
	PruneRefused                     // --prune moved nothing; Err says why
	FileWarning                      // saved, but with an anomaly worth knowing (Err says what)
	ViewsChanged                     // the sidecars or the date view were converted to new options (Files changed)
	WouldPrune                       // an album copy a refused --prune would have moved
	PruneKept                        // --prune left an album copy in place: its deletion is not proven (Err says why)
	FileRestored                     // a file that came back on the server was moved back from the trash
	LocalRestored                    // a saved file missing or changed on disk was downloaded again in place
)

// Event is one thing the backup did or decided. Fields that do not apply
// to a kind are zero.
type Event struct {
	Kind         Kind
	Album        string
	Title        string
	FileID       int64
	CollectionID int64
	Path         string // relative to the backup folder
	Files        int
	Bytes        int64
	Attempt      int
	Delay        time.Duration
	Err          error
}

// Summary is what a run did. The groups are embedded: s.New is
// s.Saved.New.
type Summary struct {
	// Started is set once the run is past its checks (folder, lock, state,
	// account): a run refused before it starts has done nothing worth
	// summarising, and records nothing but its refusal.
	Started  bool
	Start    time.Time
	Duration time.Duration
	Bytes    int64 // downloaded
	Saved
	Missed
	Albums
	Totals
	PruneRefused string // why --prune moved nothing, if it did not run
	// Failures are the files not saved, by id; Reasons counts them by class.
	Failures []folder.Failure
	Reasons  map[string]int
}

// Saved counts what came into the backup.
type Saved struct {
	New     int // files downloaded
	Linked  int // album entries made from files already saved
	Adopted int // files recognised from an existing export
	Updated int // metadata edits applied without downloading
	// Unchanged counts files saved earlier and left as they were.
	Unchanged int
	// LocalRestored counts saved files found missing (or, with verify,
	// changed) on disk and downloaded again; they are not in New.
	LocalRestored  int
	Restored       int // album copies moved back from the trash
	HashMismatches int // saved, but not what their metadata claims
}

// Missed counts what did not come into the backup, or left it.
type Missed struct {
	Failed  int // files not saved (retried first next run)
	Skipped int // files the filters left out this run
	// LeftOut counts the files the filters keep out of the backup, this
	// run or earlier ones.
	LeftOut         int
	DeletedOnServer int // entries removed or trashed on the server (local copies kept)
	Pruned          int // album copies moved to the trash
}

// Albums counts what happened to albums.
type Albums struct {
	AlbumsLeftOut int // albums this run's filters did not take
	AlbumsDeleted int
	AlbumsFailed  int
}

// Totals are what the backup holds after the run: files saved, and their
// plaintext bytes.
type Totals struct {
	TotalFiles int
	TotalBytes int64
}

// tally counts what a run does and tells its events, one at a time. Safe
// for concurrent use.
type tally struct {
	events  func(Event)
	emitMu  sync.Mutex
	mu      sync.Mutex // guards everything below
	sum     Summary
	touched map[int64]bool // files this run saved, linked, updated or failed
	// superseded are the failures of each file that a later save of it in
	// the same run makes moot (a retry of a stale entry, say).
	superseded map[int64][]folder.Failure
}

func newTally(events func(Event), start time.Time) *tally {
	return &tally{events: events, touched: map[int64]bool{}, superseded: map[int64][]folder.Failure{},
		sum: Summary{Start: start, Reasons: map[string]int{}}}
}

// emit tells e, unless no one listens.
func (t *tally) emit(e Event) {
	if t.events == nil {
		return
	}
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.events(e)
}

// count changes the summary.
func (t *tally) count(change func(*Summary)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	change(&t.sum)
}

// did counts what the run did to file id, which it touched.
func (t *tally) did(id int64, change func(*Summary)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.touched[id] = true
	change(&t.sum)
}

// failed counts a file the run could not save and tells it, in album cid
// (0 when no album is known).
func (t *tally) failed(f folder.Failure, cid int64, err error) {
	f.Reason, f.Error = Reason(err), err.Error()
	t.did(f.FileID, func(s *Summary) {
		s.Failed++
		s.Failures = append(s.Failures, f)
		s.Reasons[f.Reason]++
	})
	t.emit(Event{Kind: FileFailed, Album: f.Album, Title: f.Title, FileID: f.FileID, CollectionID: cid, Err: err})
}

// failedFile counts a file the run could not save, as failed: a later
// save of the same file in this run forgives it (forgive).
func (t *tally) failedFile(f folder.Failure, cid int64, err error) {
	f.Reason, f.Error = Reason(err), err.Error()
	t.mu.Lock()
	t.superseded[f.FileID] = append(t.superseded[f.FileID], f)
	t.mu.Unlock()
	t.failed(f, cid, err)
}

// forgive takes back the failures of file id that failedFile counted: the
// file is saved now.
func (t *tally) forgive(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.superseded[id] {
		if i := slices.Index(t.sum.Failures, f); i >= 0 {
			t.sum.Failures = slices.Delete(t.sum.Failures, i, i+1)
			t.sum.Failed--
			if t.sum.Reasons[f.Reason]--; t.sum.Reasons[f.Reason] == 0 {
				delete(t.sum.Reasons, f.Reason)
			}
		}
	}
	delete(t.superseded, id)
}

// wasTouched reports whether the run touched file id.
func (t *tally) wasTouched(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.touched[id]
}

// total counts, once the run is over, the saved files it did not touch,
// what the filters keep out, and what the backup holds.
func (t *tally) total(st *state.Store) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = st.Briefs(func(b state.Brief) error {
		if b.Status == state.Skipped {
			t.sum.LeftOut++
		}
		if (b.Status == state.Saved || b.Status == state.HashMismatch) && b.Placed() {
			t.sum.TotalFiles++
			t.sum.TotalBytes += plainSize(b.Size)
			if !t.touched[b.ID] {
				t.sum.Unchanged++
			}
		}
		return nil
	})
}

// summary is the run's summary so far.
func (t *tally) summary() *Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &t.sum
}

// plainSize estimates plaintext bytes from a ciphertext size.
func plainSize(ct int64) int64 {
	if ct <= 0 {
		return 0
	}
	chunks := (ct + secretstream.ChunkSize + secretstream.Overhead - 1) / (secretstream.ChunkSize + secretstream.Overhead)
	return ct - chunks*secretstream.Overhead
}

// Failure reasons: a stable class for each failed file, for monitoring
// (the JSON events and last-run.json carry them; docs/scripting.md lists
// them).
const (
	ReasonAuth        = "auth"        // the server rejected the session or the access
	ReasonServer      = "server"      // the server or object store answered with an error
	ReasonNetwork     = "network"     // connections, resets, timeouts
	ReasonTruncated   = "truncated"   // the encrypted stream ended early or ran long
	ReasonCorrupt     = "corrupt"     // bytes failed authentication, or an unusable archive
	ReasonDisk        = "disk"        // writing to the backup folder failed
	ReasonUnsupported = "unsupported" // something quak cannot handle (a name outside DIR, a format)
	ReasonOther       = "other"       // anything else; the error text says what
)

// Reason classifies why a file failed, from the error's types alone.
func Reason(err error) string {
	var ae *errs.ApiError
	var te *errs.TruncatedStreamError
	var to *errs.TimeoutError
	var oe *net.OpError
	var de *net.DNSError
	var ue *url.Error
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errs.ErrNotLoggedIn):
		return ReasonAuth
	case errors.As(err, &ae):
		if ae.Status == 401 || ae.Status == 403 {
			return ReasonAuth
		}
		return ReasonServer
	case errors.As(err, &te):
		return ReasonTruncated
	case errors.Is(err, errs.ErrCorrupted), errors.Is(err, livephoto.ErrBadArchive):
		return ReasonCorrupt
	case errors.As(err, &to), errors.As(err, &oe), errors.As(err, &de), errors.As(err, &ue),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return ReasonNetwork
	case errors.Is(err, layout.ErrOutside):
		return ReasonUnsupported
	case errors.As(err, &pe), errors.As(err, &le), isDiskErrno(err):
		return ReasonDisk
	}
	return ReasonOther
}

// isDiskErrno reports the errors a full, read-only or failing disk gives.
func isDiskErrno(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS, syscall.EIO, syscall.EACCES, syscall.EPERM, syscall.ENAMETOOLONG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// What stops a run: a dead session, a cancelled run, a server that cannot
// be reached (an outage), and a backup folder that is full or read-only.
// Every other error is one file's or one album's, and the run goes on.

// ErrLocked reports that another quak run holds the folder's lock.
var ErrLocked = folder.ErrLocked

// DirError reports a backup folder quak cannot use.
type DirError = folder.DirError

// fatal reports errors that stop the whole run: a dead session, a
// cancelled run, a server that cannot be reached, and a backup folder that
// is full or read-only (every further file would fail the same way).
func fatal(ctx context.Context, err error) bool {
	var de *DirError
	var ue *UnreachableError
	var le *apiclient.LinkError // the link stopped working: nothing more can be read
	return errors.Is(err, errs.ErrNotLoggedIn) || ctx.Err() != nil || errors.As(err, &de) || errors.As(err, &ue) || errors.As(err, &le)
}

// diskError turns a full or read-only file system under dir (named as the
// run was given it) into the *DirError that stops the run, and returns
// other errors as they are.
func diskError(dir string, err error) error {
	var de *DirError
	if errors.As(err, &de) {
		return err // already says so: wrapping again would repeat it
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS} {
		if errors.Is(err, e) {
			return &DirError{Dir: dir, Reason: "is full or read-only; the run stopped", Err: err}
		}
	}
	return err
}

func isDirError(err error) bool {
	var de *DirError
	return errors.As(err, &de)
}
