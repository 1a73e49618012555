package backup

import (
	"slices"
	"sync"
	"time"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

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
