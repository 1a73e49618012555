package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/quak-photos/quak/download/durable"
)

// Failure is one file a run could not save.
type Failure struct {
	FileID int64  `json:"fileID"`
	Album  string `json:"album"`
	Title  string `json:"title"`
	Reason string `json:"reason"` // a stable class (backup.Reason)
	Error  string `json:"error"`
}

// Counts are what a run did, file by file. Fields are in the order of
// their JSON names, as every record quak wrote has them.
type Counts struct {
	Adopted         int `json:"adopted"`
	AlbumsDeleted   int `json:"albumsDeleted"`
	AlbumsFailed    int `json:"albumsFailed"`
	AlbumsLeftOut   int `json:"albumsLeftOut"`
	DeletedOnServer int `json:"deletedOnServer"`
	Failed          int `json:"failed"`
	HashMismatches  int `json:"hashMismatches"`
	LeftOut         int `json:"leftOut"`
	Linked          int `json:"linked"`
	Metadata        int `json:"metadata"`
	New             int `json:"new"`
	Pruned          int `json:"pruned"`
	Restored        int `json:"restored"`
	RestoredLocal   int `json:"restoredLocal"`
	Skipped         int `json:"skipped"`
	Unchanged       int `json:"unchanged"`
}

// Outcomes of a run, as RunRecord.Outcome says them.
const (
	OutcomeOK          = "ok"
	OutcomePartial     = "partial"
	OutcomeInterrupted = "interrupted"
	OutcomeFailed      = "failed"
)

// RunRecord is how a run that started went: DIR/.quak/last-run.json, and
// last-success.json for the last fully successful one. quak status and
// monitors read it; docs/scripting.md documents it. Fields are in the
// order of their JSON names.
type RunRecord struct {
	Bytes        int64          `json:"bytes"`
	Counts       Counts         `json:"counts"`
	Duration     float64        `json:"duration"` // seconds
	Email        string         `json:"email"`
	End          time.Time      `json:"end"`
	Endpoint     string         `json:"endpoint"`
	Error        *string        `json:"error"`
	ExitCode     int            `json:"exitCode"`
	FailedIDs    []int64        `json:"failedIDs"`
	Failures     []Failure      `json:"failures"`
	MetadataOnly bool           `json:"metadataOnly"`
	Outcome      string         `json:"outcome"`
	PruneRefused string         `json:"pruneRefused"`
	Reasons      map[string]int `json:"reasons"`
	Start        time.Time      `json:"start"`
	Started      bool           `json:"started"`
	TotalBytes   int64          `json:"totalBytes"`
	TotalFiles   int            `json:"totalFiles"`
	UserID       int64          `json:"userID"`
	Version      string         `json:"version"`
}

// Refusal is DIR/.quak/last-refused.json: the last run refused before it
// started (lock held, session unusable), which wrote no RunRecord.
type Refusal struct {
	Error    string    `json:"error"`
	ExitCode int       `json:"exitCode"`
	Time     time.Time `json:"time"`
	Version  string    `json:"version"`
}

// Seconds is t in UTC to the second, as records keep times.
func Seconds(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// WriteRun records how a run went in last-run.json, and in
// last-success.json too when succeeded; it supersedes any refusal before
// it. A run record that cannot be written is removed, so that the record
// of an older run never goes on saying how the backup is.
func (f *Folder) WriteRun(rec *RunRecord, succeeded bool) error {
	if err := f.writeJSON(lastRun, rec); err != nil {
		_ = os.Remove(f.path(lastRun))
		return fmt.Errorf("recording the run: %w", err)
	}
	if err := os.Remove(f.path(lastRefused)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("recording the run: %w", err)
	}
	if succeeded {
		if err := f.writeJSON(lastSuccess, rec); err != nil {
			return fmt.Errorf("recording the run: %w", err)
		}
	}
	return durable.SyncDir(f.path())
}

// WriteRefusal records a run refused before it started, when DIR already
// holds a backup (a missing DIR is not created, and nothing is recorded).
func (f *Folder) WriteRefusal(r Refusal) error {
	fi, err := os.Stat(f.path())
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // no backup here: nowhere to record it
	case err != nil:
		return err
	case !fi.IsDir():
		return f.error("has a "+StateDir+" that is not a folder", nil)
	}
	if err := f.CheckLinks(); err != nil {
		return err
	}
	// The temp area may be missing in a folder no run prepared.
	b, err := marshal(r)
	if err != nil {
		return err
	}
	return durable.WriteFileSynced(f.path(), f.path(lastRefused), b, 0o644)
}

// LastRun reads last-run.json: os.ErrNotExist when there is none.
func (f *Folder) LastRun() (*RunRecord, error) { return f.readRun(lastRun) }

// LastSuccess reads last-success.json: os.ErrNotExist when there is none.
func (f *Folder) LastSuccess() (*RunRecord, error) { return f.readRun(lastSuccess) }

// readRun reads a run record. Errors: os.ErrNotExist when there is none,
// *RecordError when it is not JSON or holds no run (null, {}).
func (f *Folder) readRun(name string) (*RunRecord, error) {
	var r *RunRecord
	err := f.readJSON(name, &r)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return nil, &RecordError{Path: f.path(name), Reason: "is not JSON (" + se.Error() + ")"}
	case errors.As(err, &te):
		return nil, &RecordError{Path: f.path(name), Reason: "is not a run record (" + te.Error() + ")"}
	case err != nil:
		return nil, err
	case r == nil || !knownOutcome(r.Outcome):
		return nil, &RecordError{Path: f.path(name), Reason: "holds no run (no outcome quak writes)"}
	}
	return r, nil
}

// knownOutcome reports an outcome quak writes.
func knownOutcome(o string) bool {
	switch o {
	case OutcomeOK, OutcomePartial, OutcomeInterrupted, OutcomeFailed:
		return true
	}
	return false
}

// RecordError is a run record that does not read as one: damaged, emptied
// or edited by hand. The next run that starts writes it again.
type RecordError struct {
	Path   string
	Reason string
}

func (e *RecordError) Error() string { return e.Path + " is unreadable: it " + e.Reason }

// LastRefusal reads last-refused.json: os.ErrNotExist when there is none.
func (f *Folder) LastRefusal() (*Refusal, error) {
	var r Refusal
	if err := f.readJSON(lastRefused, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// lastVerify is what the last quak verify found missing or changed.
const lastVerify = "last-verify.json"

// maxDamage caps the findings last-verify.json keeps.
const maxDamage = 1000

// Damage is a saved file that quak verify found missing or changed on
// disk. Path is within DIR.
type Damage struct {
	FileID int64  `json:"fileID"`
	Kind   string `json:"kind"` // "missing" or "changed"
	Path   string `json:"path"`
}

// VerifyRecord is DIR/.quak/last-verify.json: what quak verify found
// missing or changed, from the last verify that ran to its end, until a
// verify finds those files whole again or a backup that fully succeeds
// downloads them again (Repaired). quak status reads it; monitors may.
// Fields are in the order of their JSON names.
type VerifyRecord struct {
	Checked  int        `json:"checked"` // files hashed by that verify
	Damaged  []Damage   `json:"damaged"` // at most 1000
	Repaired *time.Time `json:"repaired"`
	Time     time.Time  `json:"time"` // when that verify ended
	Total    int        `json:"total"`
}

// Open reports the files found damaged and not yet downloaded again.
func (r *VerifyRecord) Open() []Damage {
	if r == nil || r.Repaired != nil {
		return nil
	}
	return r.Damaged
}

// Pending lists the ids of Open, once each, for a backup to download
// again.
func (r *VerifyRecord) Pending() []int64 {
	var ids []int64
	seen := map[int64]bool{}
	for _, d := range r.Open() {
		if !seen[d.FileID] {
			seen[d.FileID] = true
			ids = append(ids, d.FileID)
		}
	}
	return ids
}

// WriteVerify records what a verify that ran to its end found. Damage an
// earlier verify found and no backup has repaired since stays recorded for
// the files this one did not check (a --sample run). The caller holds the
// lock.
func (f *Folder) WriteVerify(rec *VerifyRecord, checked map[int64]bool) error {
	prev, err := f.LastVerify()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		prev = nil // a damaged record is replaced
	}
	now := map[int64]bool{}
	for _, d := range rec.Damaged {
		now[d.FileID] = true
	}
	for _, d := range prev.Open() {
		if !checked[d.FileID] && !now[d.FileID] {
			rec.Damaged = append(rec.Damaged, d)
		}
	}
	if len(rec.Damaged) > maxDamage {
		rec.Damaged = rec.Damaged[:maxDamage]
	}
	if err := f.writeJSON(lastVerify, rec); err != nil {
		return fmt.Errorf("recording what verify found: %w", err)
	}
	return nil
}

// VerifyRepaired records that a backup that fully succeeded at t
// downloaded again what the last verify found damaged (it was given
// Pending). The caller holds the lock.
func (f *Folder) VerifyRepaired(t time.Time) error {
	rec, err := f.LastVerify()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(rec.Open()) == 0:
		return nil
	}
	t = Seconds(t)
	rec.Repaired = &t
	if err := f.writeJSON(lastVerify, rec); err != nil {
		return fmt.Errorf("recording what verify found: %w", err)
	}
	return nil
}

// LastVerify reads last-verify.json: os.ErrNotExist when there is none.
func (f *Folder) LastVerify() (*VerifyRecord, error) {
	var r VerifyRecord
	if err := f.readJSON(lastVerify, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
