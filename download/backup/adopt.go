package backup

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

// adopter recognises what an `ente export` already saved: an album folder
// that an export made is adopted, and the files its sidecars describe are
// checked against their hashes, not downloaded again.
type adopter struct {
	root   string // DIR, absolute
	albums *albumSet
	names  *names
	views  *views.Keeper
	tally  *tally
	mu     sync.Mutex
	// found holds, per album, the names an `ente export` gave each file id.
	found map[int64]map[int64][]string
}

// scanExport reads the sidecars of an adopted folder, so the files they
// describe can be checked instead of downloaded again.
func (ad *adopter) scanExport(c *state.Collection) error {
	meta, err := layout.Join(ad.root, c.Folder, ".meta")
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(meta)
	if err != nil {
		return nil //nolint:nilerr // no sidecars: nothing to adopt
	}
	found := map[int64][]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || e.Name() == "album_meta.json" {
			continue
		}
		if id, names := ad.exportNames(filepath.Join(meta, e.Name())); id != 0 {
			found[id] = names
		}
	}
	ad.mu.Lock()
	if ad.found == nil {
		ad.found = map[int64]map[int64][]string{}
	}
	ad.found[c.ID] = found
	ad.mu.Unlock()
	return nil
}

// exportNames reads an `ente export` sidecar: the file id and the names it
// gives the file's parts, or 0 when it names none or a name would leave
// the folder.
func (ad *adopter) exportNames(path string) (int64, []string) {
	id, names := ad.views.SidecarOf(path)
	if id == 0 || len(names) == 0 {
		return 0, nil
	}
	for _, n := range names {
		if layout.Sanitize(n, "") != n { // names that would leave the folder are ignored
			return 0, nil
		}
	}
	return id, names
}

// folderAlbum reports whether folder exists under DIR and, if it has an
// `ente export` album_meta.json, the album id it names (0 otherwise).
func (ad *adopter) folderAlbum(name string) (id int64, exists bool) {
	dir, err := layout.Join(ad.root, name)
	if err != nil {
		return 0, true
	}
	if _, err := os.Stat(dir); err != nil {
		return 0, false
	}
	return ad.views.AlbumOf(dir), true
}

// previous is the entry a download replaces in c: the file's own, or the
// names an adopted `ente export` sidecar gave it (a damaged copy is replaced
// in place, not kept beside the good one).
func (ad *adopter) previous(sf *state.File, c *state.Collection, it *catalog.Item) *state.Entry {
	if sf != nil && sf.Entries[c.ID] != nil {
		return sf.Entries[c.ID]
	}
	ad.mu.Lock()
	names := ad.found[c.ID][it.FileID]
	ad.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	return &state.Entry{Name: names[0], Parts: names, Meta: state.Meta{Title: it.Meta.Title}}
}

// adoptExisting recognises a file that an `ente export` already saved in an
// adopted folder: when its bytes match the metadata hash it is recorded as
// saved, without a download.
func (ad *adopter) adoptExisting(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	ad.mu.Lock()
	names := ad.found[c.ID][it.FileID]
	ad.mu.Unlock()
	if sf != nil || len(names) == 0 || it.Meta.Hash == "" {
		return nil
	}
	dir, err := ad.albums.dir(c)
	if err != nil || !exportHolds(dir, names, it.Meta) {
		return nil
	}
	rec := record(it, sf)
	placed(rec, it, it.Meta.Hash, false)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	ad.names.inAlbum(c.ID, func(n *layout.Namer) {
		for _, name := range names {
			n.Take(name)
		}
	})
	ad.tally.did(it.FileID, func(s *Summary) { s.Adopted++ })
	if err := ad.views.WriteSidecar(rec, c, nil); err != nil {
		return nil
	}
	ad.tally.emit(Event{Kind: FileAdopted, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec
}

// exportHolds reports whether the files names in dir hash to what m says:
// one file, or a live photo's two parts.
func exportHolds(dir string, names []string, m state.Meta) bool {
	want := []string{m.Hash}
	if catalog.IsLivePhoto(m) {
		ih, vh, ok := catalog.SplitLiveHash(m.Hash)
		if !ok {
			return false
		}
		want = []string{ih, vh}
	}
	if len(names) != len(want) {
		return false
	}
	for i, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return false // a link is never taken for a saved file
		}
		h, err := download.HashFile(p)
		if err != nil || !livephoto.HashMatches(want[i], h) {
			return false
		}
	}
	return true
}
