package views

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// dateView keeps the second tree of hard links, by date, under
// DIR/DateViewDir (Options.DateView).
type dateView struct {
	c     *Config
	mu    sync.Mutex
	names map[string]*layout.Namer // the links' names taken in each date folder; nil until first used
}

// place keeps f's place in the date view in step with its record: linked
// from one of its album copies, in the folder of its creation date, named
// by its title; moved when the date or title changes, linked again when
// its content changes, and taken out when no album copy is left (pruned)
// or the date view is off.
func (d *dateView) place(f *state.File) (changed bool, err error) {
	var srcColl *state.Collection
	var src *state.Entry
	var srcDir string
	if d.c.Options.DateView != "" {
		srcColl, src, srcDir = d.source(f)
	}
	if src == nil {
		if f.View == nil {
			return false, nil
		}
		d.unview(f.View)
		f.View = nil
		return true, nil
	}
	dateFolder := d.c.Options.DateView.Folder(micros(f.Meta.CreationTime).In(d.c.Options.zone()))
	if v := f.View; v != nil && (v.Folder != dateFolder || v.Title != f.Meta.Title || len(v.Parts) != len(src.Parts)) {
		d.unview(v)
		f.View, changed = nil, true
	}
	dir, err := layout.Join(d.c.Dir, DateViewDir, dateFolder)
	if err != nil {
		return changed, err
	}
	if f.View == nil {
		f.View = &state.View{Folder: dateFolder, Title: f.Meta.Title, Parts: d.linkNames(dateFolder, f, src, srcDir)}
	}
	ch, err := d.link(f, src, srcDir, dir)
	if changed = changed || ch; err != nil {
		return changed, err
	}
	ch, err = d.sidecars(f, srcColl, src, srcDir, dir)
	return changed || ch, err
}

// link makes each part of f's place in the date folder dir a link to its
// source copy's part (a copy where links are impossible), when it is not
// one already or the file's content changed.
func (d *dateView) link(f *state.File, src *state.Entry, srcDir, dir string) (changed bool, err error) {
	v := f.View
	fresh := v.Header != f.Header
	v.Header = f.Header
	copied := false
	for i, part := range v.Parts {
		from, to := filepath.Join(srcDir, src.Parts[i]), filepath.Join(dir, part)
		switch {
		case !fresh && !v.Copy && sameFile(from, to):
		case !fresh && v.Copy && d.c.Disk.Exists(to):
		default:
			if err := d.c.Disk.MkdirAll(dir, 0o755); err != nil {
				return changed, err
			}
			cp, err := d.c.Disk.LinkOrCopy(from, to)
			if err != nil {
				return changed, err
			}
			copied, changed = copied || cp, true
			continue
		}
		copied = copied || v.Copy
	}
	v.Copy = copied
	return changed, nil
}

// sidecars links the XMP and Takeout sidecars of the source copy's parts
// (in album c) beside the date view's, and removes those the options no
// longer want. A name that is a file's own, in the album or in the date
// folder, is that file's, not a sidecar: it is neither linked nor removed.
// A sidecar link that no longer holds what quak linked there was rewritten
// by another tool: it is the user's, left as it is and no longer kept.
func (d *dateView) sidecars(f *state.File, c *state.Collection, src *state.Entry, srcDir string, dir string) (changed bool, err error) {
	v := f.View
	style := d.c.Options.style()
	for i, part := range v.Parts {
		for _, s := range []struct {
			on       bool
			from, to string
		}{
			{d.c.Options.XMP, sidecars.XMPName(src.Parts[i]), sidecars.XMPName(part)},
			{style == sidecars.Takeout, sidecars.TakeoutName(src.Parts[i]), sidecars.TakeoutName(part)},
		} {
			if d.takenIn(v.Folder, s.to) || d.c.Taken(c.ID, s.from) {
				continue
			}
			ch, err := d.sidecar(f, filepath.Join(srcDir, s.from), filepath.Join(dir, s.to), s.on && slices.Contains(src.Sidecars, s.from))
			changed = changed || ch
			if err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// sidecar keeps the date view's link to sidecar from at to: made when on
// and from is there, removed otherwise, and left alone when to is the
// user's.
func (d *dateView) sidecar(f *state.File, from, to string, on bool) (changed bool, err error) {
	v, name := f.View, filepath.Base(to)
	own := slices.Contains(v.Sidecars, name)
	if own && usersNow(&state.Entry{SidecarHashes: v.SidecarHashes}, to, name, nil) {
		d.c.Tell(Note{Title: f.Meta.Title, FileID: f.ID, Path: filepath.Join(DateViewDir, v.Folder, name),
			Err: fmt.Errorf("date view sidecar %s no longer holds what quak linked there: left as yours, and no longer kept in step", name)})
		disownView(v, name)
		return false, nil
	}
	if !on || !d.c.Disk.Exists(from) {
		if own {
			disownView(v, name)
			return removeIfExists(d.c.Disk, to), nil
		}
		return false, nil
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return false, err
	}
	switch {
	case sameFile(from, to) || sameContent(to, b):
	case !own && d.c.Disk.Exists(to):
		return false, nil // a file quak did not make
	default:
		if _, err := d.c.Disk.LinkOrCopy(from, to); err != nil {
			return false, err
		}
		changed = true
	}
	v.Sidecars = withName(v.Sidecars, name)
	if v.SidecarHashes == nil {
		v.SidecarHashes = map[string]string{}
	}
	v.SidecarHashes[name] = sidecarHash(b)
	return changed, nil
}

// disownView takes name out of the date view's sidecars.
func disownView(v *state.View, name string) {
	v.Sidecars = withoutName(v.Sidecars, name)
	delete(v.SidecarHashes, name)
	if len(v.SidecarHashes) == 0 {
		v.SidecarHashes = nil
	}
}

// takenIn reports whether name is a file's own in the date folder.
func (d *dateView) takenIn(dateFolder, name string) (taken bool) {
	d.inDate(dateFolder, func(n *layout.Namer) { taken = n.Taken(name) })
	return taken
}

// source is the album copy the date view links to: the one of the lowest
// album id whose parts are all on disk, its album and its folder.
func (d *dateView) source(f *state.File) (*state.Collection, *state.Entry, string) {
	colls := d.c.Albums()
	for _, cid := range slices.Sorted(maps.Keys(f.Entries)) {
		c, e := colls[cid], f.Entries[cid]
		if c == nil || c.Pruned || e.Stale || !d.c.PartsExist(c, e) {
			continue
		}
		if dir, err := layout.Join(d.c.Dir, c.Folder); err == nil {
			return c, e, dir
		}
	}
	return nil, nil, ""
}

// names names f's parts in a date folder from its title, unique in the
// folder; a name on disk is free only when it is already a link to the
// part (left by a run that stopped before recording it).
func (d *dateView) linkNames(dateFolder string, f *state.File, src *state.Entry, srcDir string) []string {
	exts := partExts(src.Parts)
	stem := f.Meta.Title
	if len(exts) > 1 || exts[0] != "" {
		stem = strings.TrimSuffix(stem, filepath.Ext(stem))
	}
	dir := filepath.Join(d.c.Dir, DateViewDir, dateFolder)
	out := make([]string, len(exts))
	d.inDate(dateFolder, func(n *layout.Namer) {
		for i, ext := range exts {
			out[i] = n.UniqueFree(layout.SanitizeFile(stem+ext, "file"+ext), func(name string) bool {
				p := filepath.Join(dir, name)
				return !d.c.Disk.Exists(p) || sameFile(p, filepath.Join(srcDir, src.Parts[i]))
			})
		}
	})
	return out
}

// unview takes a file out of the date view: its links, their sidecars
// (not a name another file of the folder has), and the date folders left
// empty.
func (d *dateView) unview(v *state.View) {
	dir, err := layout.Join(d.c.Dir, DateViewDir, v.Folder)
	if err != nil {
		return
	}
	for _, p := range v.Parts {
		removeIfExists(d.c.Disk, filepath.Join(dir, p))
		d.inDate(v.Folder, func(n *layout.Namer) { n.Release(p) })
	}
	for _, name := range v.Sidecars {
		if !d.takenIn(v.Folder, name) {
			removeIfExists(d.c.Disk, filepath.Join(dir, name))
		}
	}
	d.removeEmptyDirs(dir)
}

// removeEmptyDirs removes dir and its parents while they are empty, up to
// and including the date view's own folder.
func (d *dateView) removeEmptyDirs(dir string) {
	root := filepath.Join(d.c.Dir, DateViewDir)
	for strings.HasPrefix(dir+string(filepath.Separator), root+string(filepath.Separator)) && d.c.Disk.RemoveDir(dir) {
		dir = filepath.Dir(dir)
	}
}

// check refuses a date view whose own folder is a symbolic link: quak
// never writes through one it did not make.
func (d *dateView) check() error {
	fi, err := os.Lstat(filepath.Join(d.c.Dir, DateViewDir))
	if err == nil && fi.Mode()&os.ModeSymlink != 0 && d.c.Options.DateView != "" {
		return &folder.DirError{Dir: d.c.DirName, Reason: fmt.Sprintf("has %q as a symbolic link, which quak never follows", DateViewDir), Kind: folder.DirLink}
	}
	return nil
}

// keepFree makes sure DIR/DateViewDir is the date view's: an album folder
// of that name (from a backup made before albums were kept off it) is
// moved to a free name, as an album rename would; and a folder of that
// name with someone else's files in it is refused, unless quak made the
// date view there before (had).
func (d *dateView) keepFree(had bool, commit func([]*state.File, *state.Collection) error) error {
	colls := d.c.Albums()
	taken := layout.NewNamer()
	for _, name := range []string{folder.StateDir, DateViewDir} {
		taken.Take(name)
	}
	for _, c := range colls {
		taken.Take(c.Folder)
	}
	for _, id := range slices.Sorted(maps.Keys(colls)) {
		c := colls[id]
		if c.Pruned || !strings.EqualFold(c.Folder, DateViewDir) {
			continue
		}
		moved := taken.UniqueFree(c.Folder, func(name string) bool { return !d.c.Disk.Exists(filepath.Join(d.c.Dir, name)) })
		if err := d.c.Disk.Rename(filepath.Join(d.c.Dir, c.Folder), filepath.Join(d.c.Dir, moved)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("moving the album folder %s out of the date view's way: %w", c.Folder, err)
		}
		d.c.Disk.Changed(d.c.Dir)
		c.Folder = moved
		d.c.Tell(Note{Moved: true, Album: c.Name, CollectionID: c.ID, Path: moved})
		if err := commit(nil, c); err != nil {
			return err
		}
	}
	if had {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(d.c.Dir, DateViewDir))
	if err == nil && len(entries) > 0 {
		return &folder.DirError{Dir: d.c.DirName, Reason: fmt.Sprintf("has a folder %q that quak did not make; move it away to keep a date view there", DateViewDir)}
	}
	return nil
}

// removeTree removes the folders of the date view that hold no file, and
// its own folder when empty: what is left of a date view taken down.
func (d *dateView) removeTree() {
	var dirs []string
	_ = filepath.WalkDir(filepath.Join(d.c.Dir, DateViewDir), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- { // the deepest first
		d.c.Disk.RemoveDir(dirs[i])
	}
}

// inDate runs do with the names taken in the date folder, under the lock;
// the first call reads those of every file's place from the state.
func (d *dateView) inDate(dateFolder string, do func(*layout.Namer)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.names == nil {
		d.names = map[string]*layout.Namer{}
		_ = d.c.Store.Files(func(f *state.File) error {
			if f.View != nil {
				for _, p := range f.View.Parts {
					d.namerLocked(f.View.Folder).Take(p)
				}
			}
			return nil
		})
	}
	do(d.namerLocked(dateFolder))
}

func (d *dateView) namerLocked(dateFolder string) *layout.Namer {
	nm := d.names[dateFolder]
	if nm == nil {
		nm = layout.NewFileNamer()
		d.names[dateFolder] = nm
	}
	return nm
}

// partExts are the extensions a file's parts are named with: none for a
// single file (named by its title), each part's own for a live photo.
func partExts(parts []string) []string {
	if len(parts) < 2 {
		return []string{""}
	}
	exts := make([]string, len(parts))
	for i, p := range parts {
		exts[i] = filepath.Ext(p)
	}
	return exts
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
