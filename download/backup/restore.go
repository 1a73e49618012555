package backup

import (
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// fromTrash puts back in album c a file --prune moved to the trash that
// the server lists again (an album shared again, a file restored): its
// parts are moved back from the trash when they are still there and still
// hash to what was saved, so nothing is downloaded. It returns nil when
// there is no such copy (the caller downloads the file).
func (u *updater) fromTrash(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	want := catalog.PartHashes(sf)
	for i, tc := range sf.Trash {
		if len(want) == 0 || len(tc.Parts) != len(want) || !u.intact(tc.Parts, want) {
			continue
		}
		dir, err := u.albumDir(c)
		if err != nil {
			return nil
		}
		names := u.placer.entryNames(c, nil, it.FileID, it.Meta.Title, partExts(tc.Parts))
		for j, p := range tc.Parts {
			if err := u.disk.rename(filepath.Join(u.dir, p), filepath.Join(dir, names[j])); err != nil {
				for k := range j { // put back what moved: the file is downloaded instead
					_ = u.disk.rename(filepath.Join(dir, names[k]), filepath.Join(u.dir, tc.Parts[k]))
				}
				return nil
			}
		}
		rec := record(it, sf)
		rec.Trash = append(append([]state.TrashCopy{}, sf.Trash[:i]...), sf.Trash[i+1:]...)
		rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
		if err := u.views.writeSidecar(rec, c, nil); err != nil {
			return nil
		}
		if tc.Sidecar != "" {
			u.disk.remove(filepath.Join(u.dir, tc.Sidecar))
		}
		rec.Entries[c.ID].Sidecars, rec.Entries[c.ID].SidecarHashes = u.sidecarsFromTrash(c, dir, names, tc)
		u.disk.changed(dir)
		u.tally.did(it.FileID, func(s *Summary) { s.Restored++ })
		u.emit(Event{Kind: FileRestored, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Path: filepath.Join(c.Folder, names[0])})
		return rec
	}
	return nil
}

// sidecarsFromTrash moves back beside a restored copy's parts (now named
// names in dir) the XMP and Takeout sidecars that went to the trash with
// them, where this run's options keep them; the commit that follows
// rewrites those whose content is out of date, and writes those that are
// not in the trash. The others are removed from the trash with their file.
// It returns the names of those moved back (quak's own again, as they were
// when they went: their bytes are what quak wrote) with their hashes; a
// name a file already has in the folder is not taken.
func (u *updater) sidecarsFromTrash(c *state.Collection, dir string, names []string, tc state.TrashCopy) ([]string, map[string]string) {
	var own []string
	var hashes map[string]string
	for _, s := range []struct {
		on    bool
		trash []string
		name  func(string) string
	}{
		{u.o.Views.XMP, tc.XMP, sidecars.XMPName},
		{u.o.Views.style() == sidecars.Takeout, tc.Takeout, sidecars.TakeoutName},
	} {
		for j, p := range s.trash {
			if p == "" {
				continue
			}
			from, err := layout.Join(u.dir, p)
			if err != nil {
				continue
			}
			if j < len(names) && s.on && !u.names.taken(c.ID, s.name(names[j])) && !u.disk.exists(filepath.Join(dir, s.name(names[j]))) {
				to := filepath.Join(dir, s.name(names[j]))
				if u.disk.rename(from, to) == nil {
					own = append(own, s.name(names[j]))
					if b, err := os.ReadFile(to); err == nil {
						if hashes == nil {
							hashes = map[string]string{}
						}
						hashes[s.name(names[j])] = sidecarHash(b)
					}
					continue
				}
			}
			u.disk.remove(from)
		}
	}
	return own, hashes
}

// intact reports whether every part (relative to DIR, inside its trash) is
// a regular file with the hash it was saved with.
func (u *updater) intact(parts, want []string) bool {
	for i, p := range parts {
		abs, err := layout.Join(u.dir, p)
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
