package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// DateViewDir is the top-level folder of the date view. No album folder
// takes this name: an album called so gets "By date_1".
const DateViewDir = "By date"

// dateView keeps the second tree of hard links, by date, under
// DIR/DateViewDir (Views.DateView).
type dateView struct {
	*job
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
	if d.o.Views.DateView != "" {
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
	dateFolder := d.o.Views.DateView.Folder(micros(f.Meta.CreationTime).In(d.o.Views.zone()))
	if v := f.View; v != nil && (v.Folder != dateFolder || v.Title != f.Meta.Title || len(v.Parts) != len(src.Parts)) {
		d.unview(v)
		f.View, changed = nil, true
	}
	dir, err := layout.Join(d.dir, DateViewDir, dateFolder)
	if err != nil {
		return changed, err
	}
	if f.View == nil {
		f.View = &state.View{Folder: dateFolder, Title: f.Meta.Title, Parts: d.names(dateFolder, f, src, srcDir)}
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
		case !fresh && v.Copy && d.disk.exists(to):
		default:
			if err := d.disk.mkdirAll(dir, 0o755); err != nil {
				return changed, err
			}
			cp, err := d.disk.linkOrCopy(from, to)
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
	style := d.o.Views.style()
	for i, part := range v.Parts {
		for _, s := range []struct {
			on       bool
			from, to string
		}{
			{d.o.Views.XMP, sidecars.XMPName(src.Parts[i]), sidecars.XMPName(part)},
			{style == sidecars.Takeout, sidecars.TakeoutName(src.Parts[i]), sidecars.TakeoutName(part)},
		} {
			if d.takenIn(v.Folder, s.to) || d.job.names.taken(c.ID, s.from) {
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
		d.emit(Event{Kind: FileWarning, Title: f.Meta.Title, FileID: f.ID, Path: filepath.Join(DateViewDir, v.Folder, name),
			Err: fmt.Errorf("date view sidecar %s no longer holds what quak linked there: left as yours, and no longer kept in step", name)})
		disownView(v, name)
		return false, nil
	}
	if !on || !d.disk.exists(from) {
		if own {
			disownView(v, name)
			return removeIfExists(d.disk, to), nil
		}
		return false, nil
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return false, err
	}
	switch {
	case sameFile(from, to) || sameContent(to, b):
	case !own && d.disk.exists(to):
		return false, nil // a file quak did not make
	default:
		if _, err := d.disk.linkOrCopy(from, to); err != nil {
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
	d.job.names.inDate(dateFolder, func(n *layout.Namer) { taken = n.Taken(name) })
	return taken
}

// source is the album copy the date view links to: the one of the lowest
// album id whose parts are all on disk, its album and its folder.
func (d *dateView) source(f *state.File) (*state.Collection, *state.Entry, string) {
	for _, cid := range sortedIDs(f.Entries) {
		c, e := d.colls[cid], f.Entries[cid]
		if c == nil || c.Pruned || e.Stale || !d.partsExist(c, e) {
			continue
		}
		if dir, err := layout.Join(d.dir, c.Folder); err == nil {
			return c, e, dir
		}
	}
	return nil, nil, ""
}

// names names f's parts in a date folder from its title, unique in the
// folder; a name on disk is free only when it is already a link to the
// part (left by a run that stopped before recording it).
func (d *dateView) names(dateFolder string, f *state.File, src *state.Entry, srcDir string) []string {
	exts := partExts(src.Parts)
	stem := f.Meta.Title
	if len(exts) > 1 || exts[0] != "" {
		stem = strings.TrimSuffix(stem, filepath.Ext(stem))
	}
	dir := filepath.Join(d.dir, DateViewDir, dateFolder)
	out := make([]string, len(exts))
	d.job.names.inDate(dateFolder, func(n *layout.Namer) {
		for i, ext := range exts {
			out[i] = n.UniqueFree(layout.SanitizeFile(stem+ext, "file"+ext), func(name string) bool {
				p := filepath.Join(dir, name)
				return !d.disk.exists(p) || sameFile(p, filepath.Join(srcDir, src.Parts[i]))
			})
		}
	})
	return out
}

// unview takes a file out of the date view: its links, their sidecars
// (not a name another file of the folder has), and the date folders left
// empty.
func (d *dateView) unview(v *state.View) {
	dir, err := layout.Join(d.dir, DateViewDir, v.Folder)
	if err != nil {
		return
	}
	for _, p := range v.Parts {
		removeIfExists(d.disk, filepath.Join(dir, p))
		d.job.names.inDate(v.Folder, func(n *layout.Namer) { n.Release(p) })
	}
	for _, name := range v.Sidecars {
		if !d.takenIn(v.Folder, name) {
			removeIfExists(d.disk, filepath.Join(dir, name))
		}
	}
	d.removeEmptyDirs(dir)
}

// removeEmptyDirs removes dir and its parents while they are empty, up to
// and including the date view's own folder.
func (d *dateView) removeEmptyDirs(dir string) {
	root := filepath.Join(d.dir, DateViewDir)
	for strings.HasPrefix(dir+string(filepath.Separator), root+string(filepath.Separator)) && d.disk.removeDir(dir) {
		dir = filepath.Dir(dir)
	}
}

// check refuses a date view whose own folder is a symbolic link: quak
// never writes through one it did not make.
func (d *dateView) check() error {
	fi, err := os.Lstat(filepath.Join(d.dir, DateViewDir))
	if err == nil && fi.Mode()&os.ModeSymlink != 0 && d.o.Views.DateView != "" {
		return &DirError{Dir: d.o.Dir, Reason: fmt.Sprintf("has %q as a symbolic link, which quak never follows", DateViewDir), Kind: folder.DirLink}
	}
	return nil
}

// keepFree makes sure DIR/DateViewDir is the date view's: an album folder
// of that name (from a backup made before albums were kept off it) is
// moved to a free name, as an album rename would; and a folder of that
// name with someone else's files in it is refused, unless quak made the
// date view there before (had).
func (d *dateView) keepFree(had bool) error {
	colls, err := d.st.Collections()
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
	for _, id := range sortedIDs(colls) {
		c := colls[id]
		if c.Pruned || !strings.EqualFold(c.Folder, DateViewDir) {
			continue
		}
		moved := taken.UniqueFree(c.Folder, func(name string) bool { return !d.disk.exists(filepath.Join(d.dir, name)) })
		if err := d.disk.rename(filepath.Join(d.dir, c.Folder), filepath.Join(d.dir, moved)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("moving the album folder %s out of the date view's way: %w", c.Folder, err)
		}
		d.disk.changed(d.dir)
		c.Folder = moved
		d.emit(Event{Kind: AlbumRenamed, Album: c.Name, CollectionID: c.ID, Path: moved})
		if err := d.commit(nil, c); err != nil {
			return err
		}
	}
	if had {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(d.dir, DateViewDir))
	if err == nil && len(entries) > 0 {
		return &DirError{Dir: d.o.Dir, Reason: fmt.Sprintf("has a folder %q that quak did not make; move it away to keep a date view there", DateViewDir)}
	}
	return nil
}

// removeTree removes the folders of the date view that hold no file, and
// its own folder when empty: what is left of a date view taken down.
func (d *dateView) removeTree() {
	var dirs []string
	_ = filepath.WalkDir(filepath.Join(d.dir, DateViewDir), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- { // the deepest first
		d.disk.removeDir(dirs[i])
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
