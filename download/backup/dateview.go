package backup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// DateViewDir is the top-level folder of the date view. No album folder
// takes this name: an album called so gets "By date_1".
const DateViewDir = "By date"

// placeInDateView keeps f's place in the date view in step with its
// record: linked from one of its album copies, in the folder of its
// creation date, named by its title; moved when the date or title changes,
// linked again when its content changes, and taken out when no album copy
// is left (pruned) or the date view is off.
func (r *run) placeInDateView(f *state.File) (changed bool, err error) {
	var srcColl *state.Collection
	var src *state.Entry
	var srcDir string
	if r.o.Views.DateView != "" {
		srcColl, src, srcDir = r.viewSource(f)
	}
	if src == nil {
		if f.View == nil {
			return false, nil
		}
		r.unview(f.View)
		f.View = nil
		return true, nil
	}
	folder := r.o.Views.DateView.Folder(micros(f.Meta.CreationTime).In(r.zone()))
	if v := f.View; v != nil && (v.Folder != folder || v.Title != f.Meta.Title || len(v.Parts) != len(src.Parts)) {
		r.unview(v)
		f.View, changed = nil, true
	}
	dir, err := layout.Join(r.dir, DateViewDir, folder)
	if err != nil {
		return changed, err
	}
	if f.View == nil {
		f.View = &state.View{Folder: folder, Title: f.Meta.Title, Parts: r.viewNames(folder, f, src, srcDir)}
	}
	v := f.View
	fresh := v.Header != f.Header
	v.Header = f.Header
	copied := false
	for i, part := range v.Parts {
		from, to := filepath.Join(srcDir, src.Parts[i]), filepath.Join(dir, part)
		switch {
		case !fresh && !v.Copy && sameFile(from, to):
		case !fresh && v.Copy && r.exists(to):
		default:
			if r.dry() {
				r.note(to, true)
				changed = true
				continue
			}
			if err := r.mkdirAll(dir); err != nil {
				return changed, err
			}
			cp, err := r.linkOrCopy(from, to)
			if err != nil {
				return changed, err
			}
			copied, changed = copied || cp, true
			continue
		}
		copied = copied || v.Copy
	}
	v.Copy = copied
	ch, err := r.viewSidecars(srcColl, src, srcDir, v, dir)
	return changed || ch, err
}

// viewSidecars links the XMP and Takeout sidecars of the source copy's
// parts (in album c) beside the date view's, and removes those the options
// no longer want. A name that is a file's own, in the album or in the date
// folder, is that file's, not a sidecar: it is neither linked nor removed.
func (r *run) viewSidecars(c *state.Collection, src *state.Entry, srcDir string, v *state.View, dir string) (changed bool, err error) {
	style := r.o.Views.style()
	n := r.viewNamer(v.Folder)
	for i, part := range v.Parts {
		for _, s := range []struct {
			on       bool
			from, to string
		}{
			{r.o.Views.XMP, sidecars.XMPName(src.Parts[i]), sidecars.XMPName(part)},
			{style == sidecars.Takeout, sidecars.TakeoutName(src.Parts[i]), sidecars.TakeoutName(part)},
		} {
			r.mu.Lock()
			taken := n.Taken(s.to)
			r.mu.Unlock()
			if taken || r.nameTaken(c, s.from) {
				continue
			}
			from, to := filepath.Join(srcDir, s.from), filepath.Join(dir, s.to)
			own := slices.Contains(v.Sidecars, s.to)
			if !s.on || !r.exists(from) || !slices.Contains(src.Sidecars, s.from) {
				if own {
					v.Sidecars = withoutName(v.Sidecars, s.to)
					changed = r.removeIfExists(to) || changed
				}
				continue
			}
			if sameFile(from, to) || sameBytes(from, to) {
				v.Sidecars = withName(v.Sidecars, s.to)
				continue
			}
			if !own && r.exists(to) {
				continue // a file quak did not make
			}
			if _, err := r.linkOrCopy(from, to); err != nil {
				return changed, err
			}
			v.Sidecars = withName(v.Sidecars, s.to)
			changed = true
		}
	}
	return changed, nil
}

// viewSource is the album copy the date view links to: the one of the
// lowest album id whose parts are all on disk, its album and its folder.
func (r *run) viewSource(f *state.File) (*state.Collection, *state.Entry, string) {
	cids := make([]int64, 0, len(f.Entries))
	for cid := range f.Entries {
		cids = append(cids, cid)
	}
	sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
	for _, cid := range cids {
		c, e := r.colls[cid], f.Entries[cid]
		if c == nil || c.Pruned || e.Stale || !r.partsExist(c, e) {
			continue
		}
		if dir, err := layout.Join(r.dir, c.Folder); err == nil {
			return c, e, dir
		}
	}
	return nil, nil, ""
}

// viewNames names f's parts in a date folder from its title, unique in the
// folder; a name on disk is free only when it is already a link to the
// part (left by a run that stopped before recording it).
func (r *run) viewNames(folder string, f *state.File, src *state.Entry, srcDir string) []string {
	exts := partExts(src.Parts)
	stem := f.Meta.Title
	if len(exts) > 1 || exts[0] != "" {
		stem = strings.TrimSuffix(stem, filepath.Ext(stem))
	}
	n := r.viewNamer(folder)
	dir := filepath.Join(r.dir, DateViewDir, folder)
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, len(exts))
	for i, ext := range exts {
		names[i] = n.UniqueFree(layout.SanitizeFile(stem+ext, "file"+ext), func(name string) bool {
			p := filepath.Join(dir, name)
			return !r.exists(p) || sameFile(p, filepath.Join(srcDir, src.Parts[i]))
		})
	}
	return names
}

// viewNamer returns the names taken in a date folder, indexing the state's
// date view on first use.
func (r *run) viewNamer(folder string) *layout.Namer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.viewNamers == nil {
		r.viewNamers = map[string]*layout.Namer{}
		_ = r.st.Files(func(f *state.File) error {
			if f.View != nil {
				for _, p := range f.View.Parts {
					r.viewNamerLocked(f.View.Folder).Take(p)
				}
			}
			return nil
		})
	}
	return r.viewNamerLocked(folder)
}

func (r *run) viewNamerLocked(folder string) *layout.Namer {
	n := r.viewNamers[folder]
	if n == nil {
		n = layout.NewFileNamer()
		r.viewNamers[folder] = n
	}
	return n
}

// unview takes a file out of the date view: its links, their sidecars
// (not a name another file of the folder has), and the date folders left
// empty.
func (r *run) unview(v *state.View) {
	dir, err := layout.Join(r.dir, DateViewDir, v.Folder)
	if err != nil {
		return
	}
	n := r.viewNamer(v.Folder)
	for _, p := range v.Parts {
		r.removeIfExists(filepath.Join(dir, p))
		r.mu.Lock()
		n.Release(p)
		r.mu.Unlock()
	}
	for _, name := range v.Sidecars {
		r.mu.Lock()
		taken := n.Taken(name)
		r.mu.Unlock()
		if !taken {
			r.removeIfExists(filepath.Join(dir, name))
		}
	}
	if !r.dry() {
		r.removeEmptyDirs(dir)
	}
}

// removeEmptyDirs removes dir and its parents while they are empty, up to
// and including the date view's own folder.
func (r *run) removeEmptyDirs(dir string) {
	root := filepath.Join(r.dir, DateViewDir)
	for strings.HasPrefix(dir+string(filepath.Separator), root+string(filepath.Separator)) {
		if err := os.Remove(dir); err != nil {
			return
		}
		r.mu.Lock()
		delete(r.dirty, dir) // gone: nothing to fsync
		r.dirty[filepath.Dir(dir)] = true
		r.mu.Unlock()
		dir = filepath.Dir(dir)
	}
}

// keepDateViewFree makes sure DIR/DateViewDir is the date view's: an
// album folder of that name (from a backup made before albums were kept
// off it) is moved to a free name, as an album rename would; and a folder
// of that name with someone else's files in it is refused, unless quak
// made the date view there before (had).
func (r *run) keepDateViewFree(had bool) error {
	colls, err := r.st.Collections()
	if err != nil {
		return err
	}
	taken := layout.NewNamer()
	for _, name := range reservedTop {
		taken.Take(name)
	}
	for _, c := range colls {
		taken.Take(c.Folder)
	}
	ids := make([]int64, 0, len(colls))
	for id := range colls {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		c := colls[id]
		if c.Pruned || !strings.EqualFold(c.Folder, DateViewDir) {
			continue
		}
		folder := taken.UniqueFree(c.Folder, func(name string) bool { return !r.exists(filepath.Join(r.dir, name)) })
		if err := r.rename(filepath.Join(r.dir, c.Folder), filepath.Join(r.dir, folder)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("moving the album folder %s out of the date view's way: %w", c.Folder, err)
		}
		r.mu.Lock()
		r.dirty[r.dir] = true
		r.mu.Unlock()
		c.Folder = folder
		r.emit(Event{Kind: AlbumRenamed, Album: c.Name, CollectionID: c.ID, Path: folder})
		if err := r.commit(nil, c); err != nil {
			return err
		}
	}
	if had {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(r.dir, DateViewDir))
	if err == nil && len(entries) > 0 {
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("has a folder %q that quak did not make; move it away to keep a date view there", DateViewDir)}
	}
	return nil
}

// removeEmptyTree removes the folders under root, and root, that hold no
// file: what is left of a date view taken down.
func (r *run) removeEmptyTree(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- { // the deepest first
		if os.Remove(dirs[i]) == nil {
			r.mu.Lock()
			delete(r.dirty, dirs[i])
			r.dirty[filepath.Dir(dirs[i])] = true
			r.mu.Unlock()
		}
	}
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// sameBytes compares two small files (sidecars) byte for byte.
func sameBytes(a, b string) bool {
	x, err := os.ReadFile(a)
	if err != nil {
		return false
	}
	y, err := os.ReadFile(b)
	return err == nil && bytes.Equal(x, y)
}
