package backup

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/state"
)

// DefaultResumeAbove is the size above which a download can be taken up
// by a later run, and how often its resume point is recorded.
const DefaultResumeAbove = 64 << 20

// resumer keeps where large downloads stand, so that a later run takes
// them up after a crash or a dead link.
type resumer struct {
	st     *state.Store
	tmp    string
	mu     sync.Mutex
	points map[int64]*download.ResumePoint
}

// loadResumer reads where earlier runs left large downloads.
func loadResumer(st *state.Store, tmp string) (*resumer, error) {
	raw, err := st.Resumes()
	if err != nil {
		return nil, err
	}
	r := &resumer{st: st, tmp: tmp, points: map[int64]*download.ResumePoint{}}
	for id, b := range raw {
		rp := &download.ResumePoint{}
		if json.Unmarshal(b, rp) == nil {
			r.points[id] = rp
		}
	}
	return r, nil
}

// temps are the temp files, and their side files, of the downloads a
// later run takes up.
func (r *resumer) temps() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := map[string]bool{}
	for _, rp := range r.points {
		keep[rp.Temp] = true
		for _, p := range download.SideFiles(rp.Temp) {
			keep[p] = true
		}
	}
	return keep
}

// pointFor is the resume point of a file about to be downloaded, if any.
func (r *resumer) pointFor(fileID int64) *download.ResumePoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.points[fileID]
}

// save records (or, with nil, forgets) a download's resume point.
func (r *resumer) save(fileID int64, rp *download.ResumePoint) {
	r.mu.Lock()
	if rp == nil {
		delete(r.points, fileID)
	} else {
		r.points[fileID] = rp
	}
	r.mu.Unlock()
	var v any
	if rp != nil {
		v = rp
	}
	_ = r.st.PutResume(fileID, v) // a lost point costs a restart, not a file
}

// dropStale removes, after a complete run, the partial downloads of files
// the run no longer needed (saved another way, deleted, filtered): those
// of the files it did not touch.
func (r *resumer) dropStale(touched func(int64) bool) {
	r.mu.Lock()
	var stale []int64
	for id, rp := range r.points {
		if !touched(id) {
			stale = append(stale, id)
			if download.InTempDir(r.tmp, rp.Temp) { // a path elsewhere is never quak's to remove
				for _, p := range append(download.SideFiles(rp.Temp), rp.Temp) {
					_ = os.Remove(p)
				}
			}
		}
	}
	r.mu.Unlock()
	for _, id := range stale {
		r.save(id, nil)
	}
}
