package backup

import (
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// untrasher moves back from the trash an album copy --prune moved there,
// when the server lists the file again.
type untrasher struct {
	root   string // DIR, absolute
	albums *albumSet
	parts  *partNames
	disk   disk
	views  *views.Keeper
	tally  *tally
}

// fromTrash puts back in album c a file --prune moved to the trash that
// the server lists again (an album shared again, a file restored): its
// parts are moved back from the trash when they are still there and still
// hash to what was saved, so nothing is downloaded. It returns nil when
// there is no such copy (the caller downloads the file).
func (u *untrasher) fromTrash(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	want := state.PartHashes(sf)
	for i, tc := range sf.Trash {
		if len(want) == 0 || len(tc.Parts) != len(want) || !u.intact(tc.Parts, want) {
			continue
		}
		dir, err := u.albums.dir(c)
		if err != nil {
			return nil
		}
		names := u.parts.name(c, nil, it.FileID, it.Meta.Title, partExts(tc.Parts))
		for j, p := range tc.Parts {
			if err := u.disk.Rename(filepath.Join(u.root, p), filepath.Join(dir, names[j])); err != nil {
				for k := range j { // put back what moved: the file is downloaded instead
					_ = u.disk.Rename(filepath.Join(dir, names[k]), filepath.Join(u.root, tc.Parts[k]))
				}
				return nil
			}
		}
		rec := record(it, sf)
		rec.Trash = append(append([]state.TrashCopy{}, sf.Trash[:i]...), sf.Trash[i+1:]...)
		rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
		if err := u.views.WriteSidecar(rec, c, nil); err != nil {
			return nil
		}
		if tc.Sidecar != "" {
			u.disk.Remove(filepath.Join(u.root, tc.Sidecar))
		}
		rec.Entries[c.ID].Sidecars, rec.Entries[c.ID].SidecarHashes = u.views.SidecarsFromTrash(c, dir, names, tc)
		u.disk.Changed(dir)
		u.tally.did(it.FileID, func(s *Summary) { s.Restored++ })
		u.tally.emit(Event{Kind: FileRestored, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Path: filepath.Join(c.Folder, names[0])})
		return rec
	}
	return nil
}

// intact reports whether every part (relative to DIR, inside its trash) is
// a regular file with the hash it was saved with.
func (u *untrasher) intact(parts, want []string) bool {
	for i, p := range parts {
		abs, err := layout.Join(u.root, p)
		if err != nil {
			return false
		}
		if fi, err := os.Lstat(abs); err != nil || !fi.Mode().IsRegular() {
			return false
		}
		h, err := download.HashFile(abs)
		if err != nil || keys.EncodeB64(h) != want[i] {
			return false
		}
	}
	return true
}
