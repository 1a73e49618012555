package backup

import (
	"bytes"
	"encoding/json"
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
func (r *run) refresh(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (*state.File, error) {
	rec, again, err := r.update(it, sf, a, c)
	if again || err != nil || rec != nil {
		return rec, err
	}
	e := sf.Entries[c.ID]
	if e == nil || !r.partsExist(c, e) {
		return nil, nil
	}
	dir, err := r.albumDir(c)
	if err != nil {
		return nil, err
	}
	stale := false
	mtime := micros(it.Meta.CreationTime)
	for _, p := range e.Parts {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err == nil && !fi.ModTime().Equal(mtime) {
			stale = true
			if err := r.chtimes(filepath.Join(dir, p), mtime); err != nil {
				return nil, err
			}
		}
	}
	p, err := layout.Join(r.dir, c.Folder, ".meta", e.Name+".json")
	if err != nil {
		return nil, err
	}
	sc := newSidecar(sf, c.ID, c.Name, e.Parts)
	sc.Title = e.Meta.Title
	if r.o.Views.style() == sidecars.Ente && !sameJSON(p, sc) {
		stale = true
		if err := r.writeJSON(p, sc); err != nil {
			return nil, err
		}
	}
	if !stale {
		return nil, nil
	}
	r.mu.Lock()
	r.sum.Updated++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: MetadataUpdated, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, e.Name)})
	return nil, nil
}

// refreshAlbumMeta rewrites the album's album_meta.json when it is missing
// or differs.
func (r *run) refreshAlbumMeta(c *state.Collection) error {
	p, err := layout.Join(r.dir, c.Folder, ".meta", "album_meta.json")
	if err != nil {
		return err
	}
	m := albumMeta{ID: c.ID, OwnerID: c.OwnerID, AlbumName: c.Name, IsDeleted: c.Deleted, AccountOwnerIDs: []int64{r.o.Keys.UserID}}
	if sameJSON(p, m) {
		return nil
	}
	return r.writeJSON(p, m)
}

// sameJSON reports whether the file at path holds exactly what writeJSON
// would write for v.
func sameJSON(path string, v any) bool {
	want, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return false
	}
	got, err := os.ReadFile(path)
	return err == nil && bytes.Equal(got, append(want, '\n'))
}
