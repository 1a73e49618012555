package backup

import (
	"errors"
	"io/fs"
	"os"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// missingLocally lists the saved files a part of which is gone from its
// album folder (deleted by hand, say), so the run downloads them again and
// the backup stays whole. Entries the server deleted are not counted: no
// album gives them any more, nor stale copies (refreshed by linking). A
// whole album folder gone counts each file.
func (r *run) missingLocally() ([]int64, error) {
	colls, err := r.st.Collections()
	if err != nil {
		return nil, err
	}
	var out []int64
	err = r.st.Files(func(f *state.File) error {
		if f.Status != state.Saved && f.Status != state.HashMismatch {
			return nil
		}
		for cid, e := range f.Entries {
			c := colls[cid]
			// A stale copy is refreshed from another album's copy by
			// every run, without a download, whether or not it is there.
			if c == nil || c.Deleted || e.Deleted || e.Stale {
				continue
			}
			if partGone(r.dir, c.Folder, e) {
				out = append(out, f.ID)
				return nil
			}
		}
		return nil
	})
	return out, err
}

// partGone reports whether a part of entry e is missing from folder.
func partGone(dir, folder string, e *state.Entry) bool {
	parts := e.Parts
	if len(parts) == 0 {
		parts = []string{e.Name}
	}
	for _, name := range parts {
		p, err := layout.Join(dir, folder, name)
		if err != nil {
			return false
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
