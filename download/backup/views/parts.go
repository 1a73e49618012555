package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// The files quak keeps beside the originals are its own only by record:
// an XMP or Takeout sidecar by the entry (or date-view place) that lists
// it, an `ente export` sidecar in .meta by the file id inside it. A file
// of such a name that quak did not record is the user's (darktable writes
// NAME.EXT.xmp too), and is never rewritten, moved or removed.

// partFiles are the XMP and Takeout sidecars beside each saved part, and
// Takeout's metadata.json in each album folder.
type partFiles struct {
	c *Config
}

// partFile is a sidecar of a saved part: its name, whether this run's
// options want it, and what quak writes there.
type partFile struct {
	part, name string
	on         bool
	body       func() []byte
}

// entry writes the sidecars of f's copy e in album c; in a full pass it
// also removes those this run's options do not want.
func (p *partFiles) entry(f *state.File, c *state.Collection, e *state.Entry, full bool) (changed bool, err error) {
	dir, err := layout.Join(p.c.Dir, c.Folder)
	if err != nil {
		return false, err
	}
	o := p.c.Options
	for i, part := range e.Parts {
		if !p.c.Disk.Exists(filepath.Join(dir, part)) {
			continue
		}
		in := p.info(f, e, i)
		for _, s := range []partFile{
			{part, sidecars.XMPName(part), o.XMP, func() []byte { return sidecars.XMPPacket(in) }},
			{part, sidecars.TakeoutName(part), o.style() == sidecars.Takeout, func() []byte { return sidecars.TakeoutJSON(in) }},
		} {
			ch, err := p.sidecar(f, c, e, dir, s, full)
			changed = changed || ch
			if err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// sidecar writes (on) or, in a full pass, removes the sidecar s of a part
// in album c, and records it in e.Sidecars as quak's. It never touches a
// saved file of that name, a file quak did not record (unless it holds
// exactly what quak would write there), nor a name that two parts'
// sidecars would share.
func (p *partFiles) sidecar(f *state.File, c *state.Collection, e *state.Entry, dir string, s partFile, full bool) (bool, error) {
	warn := func(why string) {
		if s.on {
			p.c.Tell(Note{Album: c.Name, Title: f.Meta.Title, FileID: f.ID, CollectionID: c.ID,
				Err: fmt.Errorf("no sidecar %s: %s", s.name, why)})
		}
	}
	own := slices.Contains(e.Sidecars, s.name)
	path := filepath.Join(dir, s.name)
	if own && usersNow(e, path, s.name, s.body) {
		p.c.Tell(Note{Album: c.Name, Title: f.Meta.Title, FileID: f.ID, CollectionID: c.ID,
			Err: fmt.Errorf("sidecar %s no longer holds what quak wrote there: left as yours, and no longer kept in step", s.name)})
		disown(e, s.name)
		return false, nil
	}
	switch {
	case p.c.Taken(c.ID, s.name):
		warn("another file of the album has that name")
		disown(e, s.name)
		return false, nil
	case p.shared(c, s.part, s.name):
		warn("another file's sidecar would have the same name")
		if own {
			disown(e, s.name)
			return removeIfExists(p.c.Disk, path), nil
		}
		return false, nil
	case s.on:
		b := s.body()
		if !own && p.c.Disk.Exists(path) && !sameContent(path, b) {
			warn("a file quak did not write has that name")
			return false, nil
		}
		ch, err := p.writeIfDiffers(path, b)
		if err == nil {
			claim(e, s.name, b)
		}
		return ch, err
	case full && own:
		disown(e, s.name)
		return removeIfExists(p.c.Disk, path), nil
	}
	return false, nil
}

// shared reports whether name, the sidecar of part in c, would also be the
// sidecar of another saved file of c: Takeout cuts its suffix on long
// names, so NAME.EXT.s.json is both "NAME.EXT"'s (cut) and "NAME.EXT.s"'s
// (uncut).
func (p *partFiles) shared(c *state.Collection, part, name string) bool {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return false
	}
	for cand := base; ; {
		if cand != part && sidecars.TakeoutName(cand) == name && p.c.Taken(c.ID, cand) {
			return true
		}
		i := strings.LastIndex(cand, ".")
		if i <= 0 || len(base)-i > len(".supplemental-metadata") {
			return false
		}
		cand = cand[:i]
	}
}

// info is what f's sidecars say for part i of its copy e: the file's
// current metadata, the albums it is in (not Favorites or Uncategorized,
// which are not albums one names; a favourite is rated instead).
func (p *partFiles) info(f *state.File, e *state.Entry, i int) sidecars.Info {
	m := f.Meta
	in := sidecars.Info{Title: sidecars.PartTitle(m.Title, e.Parts[i], len(e.Parts)), Caption: m.Caption,
		Taken: takenAt(m, p.c.Options.zone()), Modified: micros(m.ModificationTime), Lat: m.Latitude, Lon: m.Longitude}
	colls := p.c.Albums()
	for cid, oe := range f.Entries {
		c := colls[cid]
		if c == nil || c.Deleted || oe.Deleted {
			continue
		}
		switch c.Type {
		case "favorites":
			in.Favorite = true
		case "uncategorized":
		default:
			in.Albums = append(in.Albums, c.Name)
		}
	}
	slices.Sort(in.Albums)
	return in
}

// takenAt is when the photo was taken, at the offset Ente recorded for the
// place, else in zone.
func takenAt(m catalog.Meta, zone *time.Location) time.Time {
	t := micros(m.CreationTime)
	if off, ok := catalog.ParseOffset(m.Offset); ok {
		return t.In(time.FixedZone("", off))
	}
	return t.In(zone)
}

// albumFile writes the album's Takeout metadata.json when the style is
// takeout (keeping the date of an earlier one), and removes it in a full
// pass otherwise. The file is quak's only by its record: one the user
// wrote or rewrote is left alone, with a warning.
func (p *partFiles) albumFile(c *state.Collection, full bool) error {
	if c.Pruned || p.c.Taken(c.ID, sidecars.TakeoutAlbumFile) {
		return nil
	}
	path, err := layout.Join(p.c.Dir, c.Folder, sidecars.TakeoutAlbumFile)
	if err != nil {
		return err
	}
	if p.c.Options.style() != sidecars.Takeout {
		if full && quaksAlbumFile(c, path) && removeIfExists(p.c.Disk, path) {
			c.TakeoutHash = ""
		}
		return nil
	}
	date := p.c.Now()
	if t, ok := albumFileDate(path); ok && quaksAlbumFile(c, path) {
		date = t
	}
	b := sidecars.AlbumJSON(c.Name, date)
	if p.c.Disk.Exists(path) && !sameContent(path, b) && !quaksAlbumFile(c, path) {
		p.c.Tell(Note{Album: c.Name, CollectionID: c.ID, Title: sidecars.TakeoutAlbumFile,
			Path: filepath.Join(c.Folder, sidecars.TakeoutAlbumFile),
			Err:  fmt.Errorf("%s is not what quak wrote there: left as yours, and not kept in step", sidecars.TakeoutAlbumFile)})
		return nil
	}
	if _, err := p.writeIfDiffers(path, b); err != nil {
		return err
	}
	c.TakeoutHash = sidecarHash(b)
	return nil
}

// ownAlbumFile is the name of album c's Takeout album file when it is
// quak's, else "".
func (p *partFiles) ownAlbumFile(c *state.Collection) string {
	path, err := layout.Join(p.c.Dir, c.Folder, sidecars.TakeoutAlbumFile)
	if err != nil || !quaksAlbumFile(c, path) || p.c.Taken(c.ID, sidecars.TakeoutAlbumFile) {
		return ""
	}
	return sidecars.TakeoutAlbumFile
}

// quaksAlbumFile reports whether the album file at p is quak's: it holds
// the bytes quak last wrote there, or, for an album recorded without their
// hash (older quaks), what quak would write there now.
func quaksAlbumFile(c *state.Collection, p string) bool {
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	if c.TakeoutHash != "" {
		return sidecarHash(b) == c.TakeoutHash
	}
	t, ok := albumFileDate(p)
	return ok && bytes.Equal(b, sidecars.AlbumJSON(c.Name, t))
}

// albumFileDate is the date a Takeout album file at p gives.
func albumFileDate(p string) (time.Time, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return time.Time{}, false
	}
	var old sidecars.TakeoutAlbum
	if json.Unmarshal(b, &old) != nil {
		return time.Time{}, false
	}
	return parseSeconds(old.Date.Timestamp)
}

func parseSeconds(s string) (time.Time, bool) {
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// drop removes the XMP and Takeout sidecars that own records as quak's of
// a part that is gone from dir (renamed or replaced), and returns own
// without them.
func (p *partFiles) drop(dir, part string, own []string, hashes map[string]string) []string {
	for _, name := range []string{sidecars.XMPName(part), sidecars.TakeoutName(part)} {
		if slices.Contains(own, name) {
			path := filepath.Join(dir, name)
			if !usersNow(&state.Entry{SidecarHashes: hashes}, path, name, nil) {
				removeIfExists(p.c.Disk, path)
			}
			own = withoutName(own, name)
		}
	}
	return own
}

// ownSidecars names the XMP and Takeout sidecars quak recorded as its own beside
// each of e's parts in album c ("" for a part with none; nil for a kind
// the options do not keep): the files of quak's own that go to the trash
// with them. A name a saved file of the album has is that file's, never a
// sidecar; a file quak did not record, or one another tool rewrote since,
// is the user's.
func (p *partFiles) ownSidecars(c *state.Collection, e *state.Entry) (xmp, takeout []string) {
	dir, err := layout.Join(p.c.Dir, c.Folder)
	if err != nil {
		return nil, nil
	}
	names := func(on bool, name func(string) string) []string {
		if !on {
			return nil
		}
		out := make([]string, len(e.Parts))
		for i, part := range e.Parts {
			if n := name(part); slices.Contains(e.Sidecars, n) && !p.c.Taken(c.ID, n) && !usersNow(e, filepath.Join(dir, n), n, nil) {
				out[i] = n
			}
		}
		return out
	}
	return names(p.c.Options.XMP, sidecars.XMPName), names(p.c.Options.style() == sidecars.Takeout, sidecars.TakeoutName)
}

// fromTrash moves back beside a restored copy's parts (now named names in
// dir) the XMP and Takeout sidecars that went to the trash with them,
// where this run's options keep them; the commit that follows rewrites
// those whose content is out of date, and writes those that are not in
// the trash. The others are removed from the trash with their file. It
// returns the names of those moved back (quak's own again, as they were
// when they went: their bytes are what quak wrote) with their hashes; a
// name a file already has in the folder is not taken.
func (p *partFiles) fromTrash(c *state.Collection, dir string, names []string, tc state.TrashCopy) ([]string, map[string]string) {
	var own []string
	var hashes map[string]string
	o := p.c.Options
	for _, s := range []struct {
		on    bool
		trash []string
		name  func(string) string
	}{
		{o.XMP, tc.XMP, sidecars.XMPName},
		{o.style() == sidecars.Takeout, tc.Takeout, sidecars.TakeoutName},
	} {
		for j, tp := range s.trash {
			if tp == "" {
				continue
			}
			from, err := layout.Join(p.c.Dir, tp)
			if err != nil {
				continue
			}
			if j < len(names) && s.on && !p.c.Taken(c.ID, s.name(names[j])) && !p.c.Disk.Exists(filepath.Join(dir, s.name(names[j]))) {
				to := filepath.Join(dir, s.name(names[j]))
				if p.c.Disk.Rename(from, to) == nil {
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
			p.c.Disk.Remove(from)
		}
	}
	return own, hashes
}

// writeIfDiffers writes b to path unless it holds exactly b already.
func (p *partFiles) writeIfDiffers(path string, b []byte) (bool, error) {
	if sameContent(path, b) {
		return false, nil
	}
	return true, p.c.Disk.WriteFile(path, b)
}
