package backup

import (
	"errors"
	"io/fs"
	"os"

	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// missingLocally lists the saved files a part of which is gone from its
// album folder (deleted by hand, say), so the run downloads them again and
// the backup stays whole. Entries the server deleted are not counted: no
// album gives them any more, nor stale copies (refreshed by linking). A
// whole album folder gone counts each file. Albums the run's filters leave
// out are not looked at.
func (l *losses) missingLocally() ([]int64, error) {
	colls, err := l.st.Collections()
	if err != nil {
		return nil, err
	}
	var out []int64
	err = l.st.Briefs(func(b state.Brief) error {
		if b.Status != state.Saved && b.Status != state.HashMismatch {
			return nil
		}
		for _, p := range b.Places {
			c := colls[p.CollectionID]
			// A stale copy is refreshed from another album's copy by
			// every run, without a download, whether or not it is there.
			if c == nil || c.Deleted || p.Deleted || p.Stale {
				continue
			}
			// An album the run's filters leave out is left for a run
			// that takes it: this one would mark the file failed and
			// never download it.
			if !l.o.Filter.TakeAlbum(filter.Album{ID: c.ID, Name: c.Name, OwnerID: c.OwnerID, Visibility: c.Visibility}) {
				continue
			}
			if partGone(l.dir, c.Folder, p.Name, p.Parts) {
				out = append(out, b.ID)
				return nil
			}
		}
		return nil
	})
	return out, err
}

// partGone reports whether a part of an entry (named name, of parts) is
// missing from folder.
func partGone(dir, folder, name string, parts []string) bool {
	if len(parts) == 0 {
		parts = []string{name}
	}
	for _, part := range parts {
		p, err := layout.Join(dir, folder, part)
		if err != nil {
			return false
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
