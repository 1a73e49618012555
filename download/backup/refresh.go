package backup

import (
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// refresh is --metadata-only's handling of a saved file: what update does
// for an edit, and beyond it, a sidecar or mtime that is missing or differs
// locally is rewritten. Nothing is downloaded; a copy that is gone stays
// gone until a full run.
func (u *updater) refresh(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (*state.File, error) {
	rec, again, err := u.update(it, sf, a, c)
	if again || err != nil || rec != nil {
		return rec, err
	}
	e := sf.Entries[c.ID]
	if e == nil || !u.partsExist(c, e) {
		return nil, nil
	}
	dir, err := u.albumDir(c)
	if err != nil {
		return nil, err
	}
	stale := false
	mtime := micros(it.Meta.CreationTime)
	for _, p := range e.Parts {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err == nil && !fi.ModTime().Equal(mtime) {
			stale = true
			if err := u.disk.chtimes(filepath.Join(dir, p), mtime); err != nil {
				return nil, err
			}
		}
	}
	p, err := layout.Join(u.dir, c.Folder, ".meta", e.Name+".json")
	if err != nil {
		return nil, err
	}
	sc := newSidecar(sf, c.ID, c.Name, e.Parts)
	sc.Title = e.Meta.Title
	if u.o.Views.style() == sidecars.Ente && !sameJSON(p, sc) {
		stale = true
		if err := u.writeJSON(p, sc); err != nil {
			return nil, err
		}
	}
	if !stale {
		return nil, nil
	}
	u.tally.did(it.FileID, func(s *Summary) { s.Updated++ })
	u.emit(Event{Kind: MetadataUpdated, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, e.Name)})
	return nil, nil
}
