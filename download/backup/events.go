package backup

import (
	"time"

	"github.com/quak-photos/quak/download/folder"
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
