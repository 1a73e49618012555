package views

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// Keeper keeps each saved file's views (its sidecars and its place in the
// date view) in step with its record, at every commit, and converts the
// whole backup when the options change.
type Keeper struct {
	c     Config
	meta  *metaFiles
	parts *partFiles
	dates *dateView
	// full is set while convert goes over every file; enteConvert, when
	// the `ente export` sidecars are rewritten then too; changes counts
	// the files whose views changed.
	full        bool
	enteConvert bool
	changes     int
}

// NewKeeper is a Keeper of c's views.
func NewKeeper(c Config) *Keeper {
	return &Keeper{c: c, meta: &metaFiles{c: &c}, parts: &partFiles{c: &c}, dates: &dateView{c: &c}}
}

// Check refuses a date view whose own folder is a symbolic link: quak
// never writes through one it did not make.
func (k *Keeper) Check() error { return k.dates.check() }

// remembered is what this run's views look like in the folder's options.
func (k *Keeper) remembered() folder.ViewOptions {
	vs := k.c.Options
	m := folder.ViewOptions{Sidecars: vs.style(), XMP: vs.XMP, DateView: vs.DateView, Applied: true}
	if vs.XMP || vs.DateView != "" {
		m.Zone, m.ZoneRules = vs.ZoneName, zoneRules(vs.zone())
		if m.Zone == "" {
			m.Zone = vs.zone().String()
		}
	}
	return m
}

// zoneRules fingerprints a zone by its offset every week from 1850 to 2100:
// two zones with the same rules get the same value, whatever their names.
func zoneRules(loc *time.Location) string {
	h := fnv.New64a()
	var b [4]byte
	for t := time.Date(1850, 1, 1, 12, 0, 0, 0, time.UTC); t.Year() < 2100; t = t.AddDate(0, 0, 7) {
		_, off := t.In(loc).Zone()
		binary.BigEndian.PutUint32(b[:], uint32(int32(off)))
		_, _ = h.Write(b[:])
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Prepare applies a change of views from prev (the folder's remembered
// ones, nil for none) to the whole backup before anything is listed,
// downloading nothing: sidecars of the new style are written and those of
// the old removed, XMP files written or removed, and the date view made,
// moved or taken down. always (--metadata-only) does it every time, to
// restore what was lost or edited locally. It returns how many files'
// views changed.
func (k *Keeper) Prepare(prev *folder.ViewOptions, always bool) (int, error) {
	want := k.remembered()
	was := folder.ViewOptions{Sidecars: sidecars.Ente, Applied: true}
	if prev != nil {
		was = *prev
	}
	renamed := was
	renamed.Zone = want.Zone
	switch {
	case always:
	case was == want:
		return 0, nil
	case renamed == want: // the same zone's rules under another name: nothing moves
		return 0, k.c.Disk.SaveViews(want)
	}
	if k.c.Options.DateView != "" {
		if err := k.dates.keepFree(was.DateView != "", k.commit); err != nil {
			return 0, err
		}
	}
	// The `ente export` sidecars are rewritten only when the style changes
	// (--metadata-only restores them file by file, and counts them).
	k.enteConvert = was.Sidecars != want.Sidecars || !was.Applied
	pending := want
	pending.Applied = false
	if err := k.c.Disk.SaveViews(pending); err != nil {
		return 0, fmt.Errorf("remembering the views: %w", err)
	}
	n, err := k.convert()
	if err != nil {
		return 0, err
	}
	if err := k.c.Disk.SaveViews(want); err != nil {
		return 0, fmt.Errorf("remembering the views: %w", err)
	}
	return n, nil
}

// convert brings every saved file's views in line with this run's options
// and returns how many files it changed.
func (k *Keeper) convert() (int, error) {
	k.full = true
	defer func() { k.full = false }()
	k.changes = 0
	if err := k.convertFiles(); err != nil {
		return 0, err
	}
	colls := k.c.Albums()
	for _, id := range slices.Sorted(maps.Keys(colls)) {
		if err := k.commit(nil, colls[id]); err != nil { // the commit writes the album's own file
			return 0, err
		}
	}
	if k.c.Options.DateView == "" {
		k.dates.removeTree()
	}
	return k.changes, nil
}

// convertFiles commits every saved file again, 500 at a time: each commit
// applies the views.
func (k *Keeper) convertFiles() error {
	var ids []int64
	err := k.c.Store.Files(func(f *state.File) error {
		if saved(f) || f.View != nil {
			ids = append(ids, f.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		batch := make([]*state.File, 0, n)
		for _, id := range ids[:n] {
			f, err := k.c.Store.File(id)
			if err != nil {
				return err
			}
			batch = append(batch, f)
		}
		ids = ids[n:]
		if err := k.commit(batch, nil); err != nil {
			return err
		}
	}
	return nil
}

// commit applies the views of files (and album c's own file) and records
// them.
func (k *Keeper) commit(files []*state.File, c *state.Collection) error {
	if err := k.Apply(files, c); err != nil {
		return err
	}
	return k.c.Record(files, c)
}

// Apply brings the views of files about to be committed in line with
// their records (and the album's own file, when c is set). A file whose
// views cannot be written is told and the run goes on; only a full or
// read-only disk stops it.
func (k *Keeper) Apply(files []*state.File, c *state.Collection) error {
	for _, f := range files {
		changed, err := k.fileViews(f)
		if err != nil {
			if err := k.c.DiskError(err); isDirError(err) {
				return err
			}
			k.c.Tell(Note{FileID: f.ID, Title: f.Meta.Title, Err: fmt.Errorf("metadata files: %w", err)})
		}
		if changed {
			k.changes++
		}
	}
	if c != nil {
		return k.parts.albumFile(c, k.full)
	}
	return nil
}

// fileViews writes f's XMP and Takeout sidecars beside each saved part
// and places it in the date view. In a full pass it also removes the
// sidecars this run's options do not want, and writes or removes the
// `ente export` sidecars in .meta.
func (k *Keeper) fileViews(f *state.File) (changed bool, err error) {
	o := k.c.Options
	if saved(f) && (o.XMP || o.style() == sidecars.Takeout || k.full) {
		colls := k.c.Albums()
		for _, cid := range slices.Sorted(maps.Keys(f.Entries)) {
			c, e := colls[cid], f.Entries[cid]
			if c == nil || c.Pruned {
				continue
			}
			if k.full && k.enteConvert {
				ch, err := k.meta.convert(f, c, e)
				if changed = changed || ch; err != nil {
					return changed, err
				}
			}
			ch, err := k.parts.entry(f, c, e, k.full)
			if changed = changed || ch; err != nil {
				return changed, err
			}
		}
	}
	ch, err := k.dates.place(f)
	return changed || ch, err
}

// AlbumFiles are the saved files with a copy in c, whose XMP keywords
// name the album: renaming, deleting or restoring it rewrites them.
func (k *Keeper) AlbumFiles(c *state.Collection) []*state.File {
	if !k.c.Options.XMP {
		return nil
	}
	var out []*state.File
	_ = k.c.Store.Files(func(f *state.File) error {
		if f.Entries[c.ID] != nil && saved(f) {
			out = append(out, f)
		}
		return nil
	})
	return out
}

// WriteSidecar writes the `.meta` sidecar of rec's entry in c (before the
// file takes its final name), removing the one of a replaced entry old
// under another name.
func (k *Keeper) WriteSidecar(rec *state.File, c *state.Collection, old *state.Entry) error {
	return k.meta.writeSidecar(rec, c, old)
}

// RefreshSidecar rewrites the `.meta` sidecar of f's copy e in c when it
// is missing or differs (--metadata-only), and says whether it did.
func (k *Keeper) RefreshSidecar(f *state.File, c *state.Collection, e *state.Entry) (bool, error) {
	return k.meta.refresh(f, c, e)
}

// RemoveSidecar removes the `.meta` sidecar of name in album folder dir
// when it describes file id.
func (k *Keeper) RemoveSidecar(dir, name string, id int64) bool { return k.meta.remove(dir, name, id) }

// SidecarOwnedBy reports whether the `.meta` sidecar at path describes
// file id or is no regular file: the only one quak writes over or
// removes.
func (k *Keeper) SidecarOwnedBy(path string, id int64) bool { return ownedBy(path, id) }

// SidecarOf reads the `.meta` sidecar at path (quak's or an `ente
// export`'s): the file id it describes and the names of its parts, or 0.
func (k *Keeper) SidecarOf(path string) (int64, []string) { return readSidecar(path) }

// AlbumOf is the album id of the album_meta.json in album folder dir, or
// 0 when it has none.
func (k *Keeper) AlbumOf(dir string) int64 { return readAlbumID(dir) }

// WriteAlbumMeta writes album c's album_meta.json.
func (k *Keeper) WriteAlbumMeta(c *state.Collection) error { return k.meta.writeAlbum(c) }

// RefreshAlbumMeta rewrites album c's album_meta.json when it is missing
// or differs.
func (k *Keeper) RefreshAlbumMeta(c *state.Collection) error { return k.meta.refreshAlbum(c) }

// DropPartSidecars removes the XMP and Takeout sidecars that own records
// as quak's of a part gone from dir (renamed or replaced), and returns own
// without them.
func (k *Keeper) DropPartSidecars(dir, part string, own []string, hashes map[string]string) []string {
	return k.parts.drop(dir, part, own, hashes)
}

// OwnSidecars names the XMP and Takeout sidecars quak recorded as its own
// beside each of e's parts in album c, which go to the trash with them
// ("" for a part with none; nil for a kind the options do not keep).
func (k *Keeper) OwnSidecars(c *state.Collection, e *state.Entry) (xmp, takeout []string) {
	return k.parts.ownSidecars(c, e)
}

// OwnAlbumFile is the name of album c's Takeout album file when it is
// quak's, to go to the trash with the album ("" otherwise).
func (k *Keeper) OwnAlbumFile(c *state.Collection) string { return k.parts.ownAlbumFile(c) }

// SidecarsFromTrash moves back beside a copy restored from the trash (its
// parts now named names in dir) the XMP and Takeout sidecars that went
// with them, where the options keep them, and removes the others. It
// returns the names moved back, quak's again, with their hashes.
func (k *Keeper) SidecarsFromTrash(c *state.Collection, dir string, names []string, tc state.TrashCopy) ([]string, map[string]string) {
	return k.parts.fromTrash(c, dir, names, tc)
}
