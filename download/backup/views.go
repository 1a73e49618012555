package backup

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// Views are the files quak keeps beside the originals for other photo
// tools, chosen per backup folder and remembered there. The originals'
// bytes are never touched.
type Views struct {
	// Sidecars is the JSON kept for each file ("" is sidecars.Ente).
	Sidecars sidecars.Style
	// XMP writes NAME.EXT.xmp beside every saved part.
	XMP bool
	// DateView, when set, keeps a second tree of hard links to the saved
	// parts under DIR/DateViewDir, in folders named by this format from
	// each file's creation time in Zone.
	DateView sidecars.DateFormat
	// Zone is the time zone of the date view's folders and of XMP times
	// whose own offset Ente does not know (nil: time.Local). ZoneName is
	// what status calls it.
	Zone     *time.Location
	ZoneName string
}

func (v Views) style() sidecars.Style {
	if v.Sidecars == "" {
		return sidecars.Ente
	}
	return v.Sidecars
}

func (v Views) zone() *time.Location {
	if v.Zone == nil {
		return time.Local
	}
	return v.Zone
}

// viewer keeps each saved file's views (its sidecars, XMP and Takeout
// files, and its place in the date view) in step with its record, at every
// commit, and converts the whole backup when the options change.
type viewer struct {
	*job
	f     *folder.Folder
	dates *dateView
	// full is set while convert goes over every file; enteConvert, when
	// the `ente export` sidecars are rewritten then too; changes counts
	// the files whose views changed.
	full        bool
	enteConvert bool
	changes     int
}

// remembered is what this run's views look like in the folder's options.
func (v *viewer) remembered() folder.ViewOptions {
	vs := v.o.Views
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

// prepare applies a change of views to the whole backup before anything
// is listed, downloading nothing: sidecars of the new style are written
// and those of the old removed, XMP files written or removed, and the date
// view made, moved or taken down. --metadata-only does it every time, to
// restore what was lost or edited locally.
func (v *viewer) prepare() error {
	if err := v.dates.check(); err != nil {
		return err
	}
	prev, err := v.f.ReadViewOptions()
	if err != nil {
		return err
	}
	want := v.remembered()
	was := folder.ViewOptions{Sidecars: sidecars.Ente, Applied: true}
	if prev != nil {
		was = *prev
	}
	renamed := was
	renamed.Zone = want.Zone
	switch {
	case v.o.MetadataOnly:
	case was == want:
		return nil
	case renamed == want: // the same zone's rules under another name: nothing moves
		return v.disk.saveViews(want)
	}
	if v.o.Views.DateView != "" {
		if err := v.dates.keepFree(was.DateView != ""); err != nil {
			return err
		}
	}
	// The `ente export` sidecars are rewritten only when the style changes
	// (--metadata-only restores them file by file, and counts them).
	v.enteConvert = was.Sidecars != want.Sidecars || !was.Applied
	pending := want
	pending.Applied = false
	if err := v.disk.saveViews(pending); err != nil {
		return fmt.Errorf("remembering the views: %w", err)
	}
	n, err := v.convert()
	if err != nil {
		return err
	}
	if n > 0 {
		v.emit(Event{Kind: ViewsChanged, Files: n})
	}
	if err := v.disk.saveViews(want); err != nil {
		return fmt.Errorf("remembering the views: %w", err)
	}
	return nil
}

// convert brings every saved file's views in line with this run's options
// and returns how many files it changed.
func (v *viewer) convert() (int, error) {
	colls, err := v.st.Collections()
	if err != nil {
		return 0, err
	}
	v.colls = colls
	v.full = true
	defer func() { v.full = false }()
	v.changes = 0
	if err := v.convertFiles(); err != nil {
		return 0, err
	}
	for _, id := range sortedIDs(colls) {
		if err := v.commit(nil, colls[id]); err != nil { // the commit writes the album's own file
			return 0, err
		}
	}
	if v.o.Views.DateView == "" {
		v.dates.removeTree()
	}
	return v.changes, nil
}

// convertFiles commits every saved file again, 500 at a time: each commit
// applies the views.
func (v *viewer) convertFiles() error {
	var ids []int64
	err := v.st.Files(func(f *state.File) error {
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
			f, err := v.st.File(id)
			if err != nil {
				return err
			}
			batch = append(batch, f)
		}
		ids = ids[n:]
		if err := v.commit(batch, nil); err != nil {
			return err
		}
	}
	return nil
}

// sortedIDs are the keys of m, in order.
func sortedIDs[V any](m map[int64]V) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// apply brings the views of files about to be committed in line with
// their records (and the album's own file, when c is set). A file whose
// views cannot be written is reported and the run goes on; only a full or
// read-only disk stops it.
func (v *viewer) apply(files []*state.File, c *state.Collection) error {
	for _, f := range files {
		changed, err := v.fileViews(f)
		if err != nil {
			if err := v.diskError(err); isDirError(err) {
				return err
			}
			v.emit(Event{Kind: FileWarning, FileID: f.ID, Title: f.Meta.Title, Err: fmt.Errorf("metadata files: %w", err)})
		}
		if changed {
			v.changes++
		}
	}
	if c != nil {
		return v.albumViews(c)
	}
	return nil
}

// fileViews writes f's XMP and Takeout sidecars beside each saved part
// and places it in the date view. In a full pass it also removes the
// sidecars this run's options do not want, and writes or removes the
// `ente export` sidecars in .meta.
func (v *viewer) fileViews(f *state.File) (changed bool, err error) {
	if saved(f) && (v.o.Views.XMP || v.o.Views.style() == sidecars.Takeout || v.full) {
		for _, cid := range sortedIDs(f.Entries) {
			c, e := v.colls[cid], f.Entries[cid]
			if c == nil || c.Pruned {
				continue
			}
			ch, err := v.entryViews(f, c, e)
			changed = changed || ch
			if err != nil {
				return changed, err
			}
		}
	}
	ch, err := v.dates.place(f)
	return changed || ch, err
}

// entryViews writes the sidecars of f's copy in album c.
func (v *viewer) entryViews(f *state.File, c *state.Collection, e *state.Entry) (changed bool, err error) {
	dir, err := layout.Join(v.dir, c.Folder)
	if err != nil {
		return false, err
	}
	if v.full && v.enteConvert {
		if changed, err = v.enteSidecar(f, c, e); err != nil {
			return changed, err
		}
	}
	style := v.o.Views.style()
	for i, part := range e.Parts {
		if !v.disk.exists(filepath.Join(dir, part)) {
			continue
		}
		in := v.info(f, e, i)
		for _, s := range []partFile{
			{part, sidecars.XMPName(part), v.o.Views.XMP, func() []byte { return sidecars.XMPPacket(in) }},
			{part, sidecars.TakeoutName(part), style == sidecars.Takeout, func() []byte { return sidecars.TakeoutJSON(in) }},
		} {
			ch, err := v.partSidecar(f, c, e, dir, s)
			changed = changed || ch
			if err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// albumViews writes the album's Takeout metadata.json when the style is
// takeout (keeping the date of an earlier one), and removes it in a full
// pass otherwise. The file is quak's only by its record: one the user
// wrote or rewrote is left alone, with a warning.
func (v *viewer) albumViews(c *state.Collection) error {
	if c.Pruned || v.names.taken(c.ID, sidecars.TakeoutAlbumFile) {
		return nil
	}
	p, err := layout.Join(v.dir, c.Folder, sidecars.TakeoutAlbumFile)
	if err != nil {
		return err
	}
	if v.o.Views.style() != sidecars.Takeout {
		if v.full && quaksAlbumFile(c, p) && removeIfExists(v.disk, p) {
			c.TakeoutHash = ""
		}
		return nil
	}
	date := v.o.Now()
	if t, ok := albumFileDate(p); ok && quaksAlbumFile(c, p) {
		date = t
	}
	b := sidecars.AlbumJSON(c.Name, date)
	if v.disk.exists(p) && !sameContent(p, b) && !quaksAlbumFile(c, p) {
		v.emit(Event{Kind: FileWarning, Album: c.Name, CollectionID: c.ID, Title: sidecars.TakeoutAlbumFile,
			Path: filepath.Join(c.Folder, sidecars.TakeoutAlbumFile),
			Err:  fmt.Errorf("%s is not what quak wrote there: left as yours, and not kept in step", sidecars.TakeoutAlbumFile)})
		return nil
	}
	if _, err := v.writeIfDiffers(p, b); err != nil {
		return err
	}
	c.TakeoutHash = sidecarHash(b)
	return nil
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

// info is what f's sidecars say for part i of its copy e: the file's
// current metadata, the albums it is in (not Favorites or Uncategorized,
// which are not albums one names; a favourite is rated instead).
func (v *viewer) info(f *state.File, e *state.Entry, i int) sidecars.Info {
	m := f.Meta
	in := sidecars.Info{Title: sidecars.PartTitle(m.Title, e.Parts[i], len(e.Parts)), Caption: m.Caption,
		Taken: taken(m, v.o.Views.zone()), Modified: micros(m.ModificationTime), Lat: m.Latitude, Lon: m.Longitude}
	for cid, oe := range f.Entries {
		c := v.colls[cid]
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
	sort.Strings(in.Albums)
	return in
}

// taken is when the photo was taken, at the offset Ente recorded for the
// place, else in zone.
func taken(m state.Meta, zone *time.Location) time.Time {
	t := micros(m.CreationTime)
	if off, ok := catalog.ParseOffset(m.Offset); ok {
		return t.In(time.FixedZone("", off))
	}
	return t.In(zone)
}

// albumFiles are the saved files with a copy in c, whose XMP keywords name
// the album: renaming, deleting or restoring it rewrites them.
func (v *viewer) albumFiles(c *state.Collection) []*state.File {
	if !v.o.Views.XMP {
		return nil
	}
	var out []*state.File
	_ = v.st.Files(func(f *state.File) error {
		if f.Entries[c.ID] != nil && saved(f) {
			out = append(out, f)
		}
		return nil
	})
	return out
}
