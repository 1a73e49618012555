package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// Views are the files quak keeps beside the originals for other photo
// tools, chosen per backup folder and remembered there (OptionsFile). The
// originals' bytes are never touched.
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

// remembered is what this run's views look like in OptionsFile.
func (r *run) remembered() folder.ViewOptions {
	v := r.o.Views
	m := folder.ViewOptions{Sidecars: v.style(), XMP: v.XMP, DateView: v.DateView, Applied: true}
	if v.XMP || v.DateView != "" {
		m.Zone, m.ZoneRules = v.ZoneName, zoneRules(r.zone())
		if m.Zone == "" {
			m.Zone = r.zone().String()
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

func (r *run) zone() *time.Location {
	if r.o.Views.Zone == nil {
		return time.Local
	}
	return r.o.Views.Zone
}

// prepareViews applies a change of views to the whole backup before
// anything is listed, downloading nothing: sidecars of the new style are
// written and those of the old removed, XMP files written or removed, and
// the date view made, moved or taken down. --metadata-only does it every
// time, to restore what was lost or edited locally.
func (r *run) prepareViews() error {
	prev, err := r.f.ReadViewOptions()
	if err != nil {
		return err
	}
	want := r.remembered()
	was := folder.ViewOptions{Sidecars: sidecars.Ente, Applied: true}
	if prev != nil {
		was = *prev
	}
	renamed := was
	renamed.Zone = want.Zone
	switch {
	case r.o.MetadataOnly:
	case was == want:
		return nil
	case renamed == want: // the same zone's rules under another name: nothing moves
		if r.dry() {
			return nil
		}
		return r.f.WriteViewOptions(want)
	}
	if r.o.Views.DateView != "" {
		if err := r.keepDateViewFree(was.DateView != ""); err != nil {
			return err
		}
	}
	// The `ente export` sidecars are rewritten only when the style changes
	// (--metadata-only restores them file by file, and counts them).
	r.enteConvert = was.Sidecars != want.Sidecars || !was.Applied
	if !r.dry() {
		pending := want
		pending.Applied = false
		if err := r.f.WriteViewOptions(pending); err != nil {
			return fmt.Errorf("remembering the views: %w", err)
		}
	}
	n, err := r.convertViews()
	if err != nil {
		return err
	}
	if n > 0 {
		r.emit(Event{Kind: ViewsChanged, Files: n})
	}
	if r.dry() {
		return nil
	}
	if err := r.f.WriteViewOptions(want); err != nil {
		return fmt.Errorf("remembering the views: %w", err)
	}
	return nil
}

// convertViews brings every saved file's views in line with this run's
// options and returns how many files it changed.
func (r *run) convertViews() (int, error) {
	colls, err := r.st.Collections()
	if err != nil {
		return 0, err
	}
	r.colls = colls
	r.viewsFull = true
	defer func() { r.viewsFull = false }()
	r.viewChanges = 0
	var ids []int64
	err = r.st.Files(func(f *state.File) error {
		if saved(f) || f.View != nil {
			ids = append(ids, f.ID)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		batch := make([]*state.File, 0, n)
		for _, id := range ids[:n] {
			f, err := r.st.File(id)
			if err != nil {
				return 0, err
			}
			batch = append(batch, f)
		}
		ids = ids[n:]
		if err := r.commit(batch, nil); err != nil {
			return 0, err
		}
	}
	cids := make([]int64, 0, len(colls))
	for id := range colls {
		cids = append(cids, id)
	}
	sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
	for _, id := range cids {
		if err := r.albumViews(colls[id]); err != nil {
			return 0, err
		}
	}
	if r.o.Views.DateView == "" && !r.dry() {
		r.removeEmptyTree(filepath.Join(r.dir, DateViewDir))
	}
	return r.viewChanges, nil
}

func saved(f *state.File) bool { return f.Status == state.Saved || f.Status == state.HashMismatch }

// applyViews brings the views of files about to be committed in line with
// their records (and the album's own file, when c is set). A file whose
// views cannot be written is reported and the run goes on; only a full or
// read-only disk stops it.
func (r *run) applyViews(files []*state.File, c *state.Collection) error {
	for _, f := range files {
		r.mu.Lock()
		delete(r.expected, f.ID)
		r.mu.Unlock()
		changed, err := r.fileViews(f)
		if err != nil {
			if err := r.diskError(err); isDirError(err) {
				return err
			}
			r.emit(Event{Kind: FileWarning, FileID: f.ID, Title: f.Meta.Title, Err: fmt.Errorf("metadata files: %w", err)})
		}
		if changed {
			r.viewChanges++
		}
	}
	if c != nil {
		return r.albumViews(c)
	}
	return nil
}

func isDirError(err error) bool {
	var de *DirError
	return errors.As(err, &de)
}

// fileViews writes f's XMP and Takeout sidecars beside each saved part
// and places it in the date view. In a full pass it also removes the
// sidecars this run's options do not want, and writes or removes the
// `ente export` sidecars in .meta.
func (r *run) fileViews(f *state.File) (changed bool, err error) {
	if saved(f) && (r.o.Views.XMP || r.o.Views.style() == sidecars.Takeout || r.viewsFull) {
		cids := make([]int64, 0, len(f.Entries))
		for cid := range f.Entries {
			cids = append(cids, cid)
		}
		sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
		for _, cid := range cids {
			c, e := r.colls[cid], f.Entries[cid]
			if c == nil || c.Pruned {
				continue
			}
			ch, err := r.entryViews(f, c, e)
			changed = changed || ch
			if err != nil {
				return changed, err
			}
		}
	}
	ch, err := r.placeInDateView(f)
	return changed || ch, err
}

// entryViews writes the sidecars of f's copy in album c.
func (r *run) entryViews(f *state.File, c *state.Collection, e *state.Entry) (changed bool, err error) {
	dir, err := layout.Join(r.dir, c.Folder)
	if err != nil {
		return false, err
	}
	if r.viewsFull && r.enteConvert {
		if changed, err = r.enteSidecar(f, c, e); err != nil {
			return changed, err
		}
	}
	style := r.o.Views.style()
	for i, part := range e.Parts {
		if !r.exists(filepath.Join(dir, part)) {
			continue
		}
		in := r.info(f, e, i)
		for _, s := range []struct {
			on   bool
			name string
			body func() []byte
		}{
			{r.o.Views.XMP, sidecars.XMPName(part), func() []byte { return sidecars.XMPPacket(in) }},
			{style == sidecars.Takeout, sidecars.TakeoutName(part), func() []byte { return sidecars.TakeoutJSON(in) }},
		} {
			ch, err := r.partSidecar(f, c, e, dir, part, s.name, s.on, s.body)
			changed = changed || ch
			if err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// partSidecar writes (on) or, in a full pass, removes the sidecar name of
// part in album c, and records it in e.Sidecars as quak's. It never
// touches a saved file of that name, a file quak did not record (unless it
// holds exactly what quak would write there), nor a name that two parts'
// sidecars would share.
func (r *run) partSidecar(f *state.File, c *state.Collection, e *state.Entry, dir, part, name string, on bool, body func() []byte) (bool, error) {
	warn := func(why string) {
		if on {
			r.emit(Event{Kind: FileWarning, Album: c.Name, Title: f.Meta.Title, FileID: f.ID, CollectionID: c.ID,
				Err: fmt.Errorf("no sidecar %s: %s", name, why)})
		}
	}
	own := slices.Contains(e.Sidecars, name)
	p := filepath.Join(dir, name)
	if own && r.usersNow(e, p, name, body) {
		r.emit(Event{Kind: FileWarning, Album: c.Name, Title: f.Meta.Title, FileID: f.ID, CollectionID: c.ID,
			Err: fmt.Errorf("sidecar %s no longer holds what quak wrote there: left as yours, and no longer kept in step", name)})
		disown(e, name)
		return false, nil
	}
	switch {
	case r.nameTaken(c, name):
		warn("another file of the album has that name")
		disown(e, name)
		return false, nil
	case r.sharedSidecar(c, part, name):
		warn("another file's sidecar would have the same name")
		if own {
			disown(e, name)
			return r.removeIfExists(p), nil
		}
		return false, nil
	case on:
		b := body()
		if !own && r.exists(p) && !sameContent(p, b) {
			warn("a file quak did not write has that name")
			return false, nil
		}
		ch, err := r.writeIfDiffers(p, b)
		if err == nil {
			e.Sidecars = withName(e.Sidecars, name)
			if e.SidecarHashes == nil {
				e.SidecarHashes = map[string]string{}
			}
			e.SidecarHashes[name] = sidecarHash(b)
		}
		return ch, err
	case r.viewsFull && own:
		disown(e, name)
		return r.removeIfExists(p), nil
	}
	return false, nil
}

// sidecarHash is what Entry.SidecarHashes keeps of bytes quak wrote.
func sidecarHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// usersNow reports whether the sidecar name recorded in e, at path p, was
// rewritten by another tool: it is there and no longer holds the bytes
// quak last wrote, or, for a name recorded without their hash (older
// quaks), what quak would write now (body; nil: such a name counts as
// quak's, as it did then).
func (r *run) usersNow(e *state.Entry, p, name string, body func() []byte) bool {
	want, ok := e.SidecarHashes[name]
	if !ok && body == nil {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	if ok {
		return sidecarHash(b) != want
	}
	return !bytes.Equal(b, body())
}

// disown takes name out of e's sidecars: quak no longer touches it.
func disown(e *state.Entry, name string) {
	e.Sidecars = withoutName(e.Sidecars, name)
	delete(e.SidecarHashes, name)
	if len(e.SidecarHashes) == 0 {
		e.SidecarHashes = nil
	}
}

// ownHashes are the hashes of h whose names are in own.
func ownHashes(h map[string]string, own []string) map[string]string {
	var out map[string]string
	for _, n := range own {
		if v, ok := h[n]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[n] = v
		}
	}
	return out
}

// sharedSidecar reports whether name, the sidecar of part in c, would also
// be the sidecar of another saved file of c: Takeout cuts its suffix on
// long names, so NAME.EXT.s.json is both "NAME.EXT"'s (cut) and
// "NAME.EXT.s"'s (uncut).
func (r *run) sharedSidecar(c *state.Collection, part, name string) bool {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return false
	}
	for cand := base; ; {
		if cand != part && sidecars.TakeoutName(cand) == name && r.nameTaken(c, cand) {
			return true
		}
		i := strings.LastIndex(cand, ".")
		if i <= 0 || len(base)-i > len(".supplemental-metadata") {
			return false
		}
		cand = cand[:i]
	}
}

// enteSidecar writes the `ente export` sidecar of f's copy in c when the
// style is ente and it is missing or differs, and removes it otherwise.
func (r *run) enteSidecar(f *state.File, c *state.Collection, e *state.Entry) (bool, error) {
	p, err := layout.Join(r.dir, c.Folder, ".meta", e.Name+".json")
	if err != nil {
		return false, err
	}
	if r.o.Views.style() != sidecars.Ente {
		return r.removeIfExists(p), nil
	}
	sc := newSidecar(f, c.ID, c.Name, e.Parts)
	sc.Title = e.Meta.Title
	if sameJSON(p, sc) {
		return false, nil
	}
	return true, r.writeJSON(p, sc)
}

// albumViews writes the album's Takeout metadata.json when the style is
// takeout (keeping the date of an earlier one), and removes it in a full
// pass otherwise.
func (r *run) albumViews(c *state.Collection) error {
	if c.Pruned || r.nameTaken(c, sidecars.TakeoutAlbumFile) {
		return nil
	}
	p, err := layout.Join(r.dir, c.Folder, sidecars.TakeoutAlbumFile)
	if err != nil {
		return err
	}
	if r.o.Views.style() != sidecars.Takeout {
		if r.viewsFull {
			r.removeIfExists(p)
		}
		return nil
	}
	date := r.o.Now()
	if b, err := os.ReadFile(p); err == nil {
		var old sidecars.TakeoutAlbum
		if json.Unmarshal(b, &old) == nil {
			if t, ok := parseSeconds(old.Date.Timestamp); ok {
				date = t
			}
		}
	}
	_, err = r.writeIfDiffers(p, sidecars.AlbumJSON(c.Name, date))
	return err
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
func (r *run) info(f *state.File, e *state.Entry, i int) sidecars.Info {
	m := f.Meta
	in := sidecars.Info{Title: sidecars.PartTitle(m.Title, e.Parts[i], len(e.Parts)), Caption: m.Caption,
		Taken: r.taken(m), Modified: micros(m.ModificationTime), Lat: m.Latitude, Lon: m.Longitude}
	for cid, oe := range f.Entries {
		c := r.colls[cid]
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
// place, else in the run's zone.
func (r *run) taken(m state.Meta) time.Time {
	t := micros(m.CreationTime)
	if off, ok := catalog.ParseOffset(m.Offset); ok {
		return t.In(time.FixedZone("", off))
	}
	return t.In(r.zone())
}

// nameTaken reports whether name is a saved file's in c's folder: a
// sidecar never replaces one.
func (r *run) nameTaken(c *state.Collection, name string) bool {
	n := r.namer(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	return n.Taken(name)
}

// sameContent reports whether the file at path holds exactly b.
func sameContent(path string, b []byte) bool {
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, b)
}

// writeIfDiffers writes b to path unless it holds exactly b already.
func (r *run) writeIfDiffers(path string, b []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	return true, r.writeFile(path, b)
}

// removeIfExists removes a file of quak's making, if it is there.
func (r *run) removeIfExists(path string) bool {
	if !r.exists(path) {
		return false
	}
	r.remove(path)
	r.mu.Lock()
	r.dirty[filepath.Dir(path)] = true
	r.mu.Unlock()
	return true
}

// dropPartSidecars removes the XMP and Takeout sidecars that own records
// as quak's of a part that is gone from dir (renamed or replaced), and
// returns own without them.
func (r *run) dropPartSidecars(dir, part string, own []string, hashes map[string]string) []string {
	for _, name := range []string{sidecars.XMPName(part), sidecars.TakeoutName(part)} {
		if slices.Contains(own, name) {
			p := filepath.Join(dir, name)
			if !r.usersNow(&state.Entry{SidecarHashes: hashes}, p, name, nil) {
				r.removeIfExists(p)
			}
			own = withoutName(own, name)
		}
	}
	return own
}

// albumFiles are the saved files with a copy in c, whose XMP keywords name
// the album: renaming, deleting or restoring it rewrites them.
func (r *run) albumFiles(c *state.Collection) []*state.File {
	if !r.o.Views.XMP {
		return nil
	}
	var out []*state.File
	_ = r.st.Files(func(f *state.File) error {
		if f.Entries[c.ID] != nil && saved(f) {
			out = append(out, f)
		}
		return nil
	})
	return out
}
