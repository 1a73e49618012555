package backup

import (
	"encoding/json"
	"os"

	"github.com/quak-photos/quak/download"
)

// DefaultResumeAbove is the size above which a download can be taken up
// by a later run, and how often its resume point is recorded.
const DefaultResumeAbove = 64 << 20

// loadResumes reads where earlier runs left large downloads.
func (r *run) loadResumes() error {
	raw, err := r.st.Resumes()
	if err != nil {
		return err
	}
	r.resumes = map[int64]*download.ResumePoint{}
	for id, b := range raw {
		rp := &download.ResumePoint{}
		if json.Unmarshal(b, rp) == nil {
			r.resumes[id] = rp
		}
	}
	return nil
}

// resumeFor is the resume point of a file about to be downloaded, if any.
func (r *run) resumeFor(fileID int64) *download.ResumePoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resumes[fileID]
}

// saveResume records (or, with nil, forgets) a download's resume point.
func (r *run) saveResume(fileID int64, rp *download.ResumePoint) {
	r.mu.Lock()
	if rp == nil {
		delete(r.resumes, fileID)
	} else {
		r.resumes[fileID] = rp
	}
	r.mu.Unlock()
	var v any
	if rp != nil {
		v = rp
	}
	_ = r.st.PutResume(fileID, v) // a lost point costs a restart, not a file
}

// dropStaleResumes removes, after a complete run, the partial downloads of
// files this run no longer needed (saved another way, deleted, filtered).
func (r *run) dropStaleResumes() {
	r.mu.Lock()
	var stale []int64
	for id, rp := range r.resumes {
		if !r.touched[id] {
			stale = append(stale, id)
			if download.InTempDir(r.tmp, rp.Temp) { // a path elsewhere is never quak's to remove
				_ = os.Remove(rp.Temp)
			}
		}
	}
	r.mu.Unlock()
	for _, id := range stale {
		r.saveResume(id, nil)
	}
}
