package backup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// updater applies what a listing says of a file whose content is saved,
// without downloading it: a copy for another album, a metadata edit (a
// new title renames the file), or a copy back from the trash.
type updater struct {
	albums  *albumSet
	names   *names
	parts   *partNames
	disk    disk
	views   *views.Keeper
	tally   *tally
	untrash *untrasher
}

// update handles an entry of a file whose content is saved already: a copy
// for a new album, a metadata edit, or nothing. again asks for a download
// (the local copies are gone).
func (u *updater) update(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (rec *state.File, again bool, err error) {
	e := sf.Entries[c.ID]
	if e != nil && !u.albums.partsExist(c, e) {
		return nil, true, nil
	}
	if e == nil {
		return u.link(it, sf, a, c)
	}
	if !e.Deleted && e.Meta.Equal(it.Meta) {
		return nil, false, nil
	}
	rec = record(it, sf)
	ne := rec.Entries[c.ID]
	ne.Deleted = false
	dir, err := u.albums.dir(c)
	if err != nil {
		return nil, false, err
	}
	if ne.Meta.Title != it.Meta.Title {
		if err := u.retitle(it, a, c, ne, dir); err != nil {
			return nil, false, err
		}
	}
	mtime := micros(it.Meta.CreationTime)
	for _, p := range ne.Parts {
		if err := u.disk.Chtimes(filepath.Join(dir, p), mtime); err != nil {
			return nil, false, err
		}
	}
	ne.Meta, rec.Meta = it.Meta, it.Meta
	if err := u.views.WriteSidecar(rec, c, nil); err != nil {
		return nil, false, err
	}
	u.tally.did(it.FileID, func(s *Summary) { s.Updated++ })
	u.tally.emit(Event{Kind: MetadataUpdated, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, ne.Name)})
	return rec, false, nil
}

// retitle renames entry ne's parts in dir after the title of it.
func (u *updater) retitle(it *catalog.Item, a *catalog.Album, c *state.Collection, ne *state.Entry, dir string) error {
	names := u.caseOnly(c, ne.Parts, it.Meta.Title)
	if names != nil {
		// The same file under a name that differs only in case: on a
		// case-insensitive file system the old names are the new ones,
		// so what goes is removed first and the parts are renamed, never
		// removed.
		for _, p := range ne.Parts {
			ne.Sidecars = u.views.DropPartSidecars(dir, p, ne.Sidecars, ne.SidecarHashes)
		}
		u.views.RemoveSidecar(dir, ne.Name, it.FileID)
	} else {
		names = u.parts.name(c, nil, it.FileID, it.Meta.Title, partExts(ne.Parts))
	}
	for i, p := range ne.Parts {
		if err := u.disk.Rename(filepath.Join(dir, p), filepath.Join(dir, names[i])); err != nil {
			return err
		}
	}
	old := *ne
	ne.Name, ne.Parts = names[0], names
	ne.Sidecars, ne.SidecarHashes = u.parts.dropOld(c, dir, &old, it.FileID, names)
	u.tally.emit(Event{Kind: FileRenamed, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return nil
}

// caseOnly returns the names a title gives an entry's parts when they
// differ from the current ones only in case (IMG.JPG renamed img.jpg),
// else nil.
func (u *updater) caseOnly(c *state.Collection, parts []string, title string) []string {
	exts := partExts(parts)
	stem := title
	if len(exts) > 1 {
		stem = strings.TrimSuffix(title, filepath.Ext(title))
	}
	names := make([]string, len(parts))
	for i, ext := range exts {
		names[i] = layout.SanitizeFile(stem+ext, "file"+ext)
		if !strings.EqualFold(names[i], parts[i]) {
			return nil
		}
	}
	if slices.Equal(names, parts) {
		return nil
	}
	u.names.inAlbum(c.ID, func(n *layout.Namer) {
		for _, name := range names {
			n.Take(name)
		}
	})
	return names
}

// link places a file saved for one album into another: hard links to the
// saved parts (copies where links are impossible), never a second download.
func (u *updater) link(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (*state.File, bool, error) {
	src, _, srcDir := u.albums.source(sf)
	if src == nil {
		if rec := u.untrash.fromTrash(it, sf, a, c); rec != nil {
			return rec, false, nil
		}
		return nil, true, nil
	}
	dir, err := u.albums.dir(c)
	if err != nil {
		return nil, false, err
	}
	names := u.parts.name(c, nil, it.FileID, it.Meta.Title, partExts(src.Parts))
	copied := false
	for i, p := range src.Parts {
		cp, err := u.disk.LinkOrCopy(filepath.Join(srcDir, p), filepath.Join(dir, names[i]))
		if err != nil {
			return nil, false, err
		}
		copied = copied || cp
	}
	rec := record(it, sf)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta, Copy: copied}
	if err := u.views.WriteSidecar(rec, c, nil); err != nil {
		return nil, false, err
	}
	u.tally.did(it.FileID, func(s *Summary) { s.Linked++ })
	u.tally.emit(Event{Kind: FileLinked, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec, false, nil
}

// refresher is --metadata-only's handling of a saved file: what the
// updater does for an edit, and beyond it, a sidecar or mtime that is
// missing or differs locally is rewritten. Nothing is downloaded; a copy
// that is gone stays gone until a full run.
type refresher struct {
	update *updater
	albums *albumSet
	disk   disk
	views  *views.Keeper
	tally  *tally
}

// refresh brings sf's copy in album c in line with listing entry it.
func (rf *refresher) refresh(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (*state.File, error) {
	rec, again, err := rf.update.update(it, sf, a, c)
	if again || err != nil || rec != nil {
		return rec, err
	}
	e := sf.Entries[c.ID]
	if e == nil || !rf.albums.partsExist(c, e) {
		return nil, nil
	}
	dir, err := rf.albums.dir(c)
	if err != nil {
		return nil, err
	}
	stale := false
	mtime := micros(it.Meta.CreationTime)
	for _, p := range e.Parts {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err == nil && !fi.ModTime().Equal(mtime) {
			stale = true
			if err := rf.disk.Chtimes(filepath.Join(dir, p), mtime); err != nil {
				return nil, err
			}
		}
	}
	changed, err := rf.views.RefreshSidecar(sf, c, e)
	if err != nil {
		return nil, err
	}
	if !stale && !changed {
		return nil, nil
	}
	rf.tally.did(it.FileID, func(s *Summary) { s.Updated++ })
	rf.tally.emit(Event{Kind: MetadataUpdated, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, e.Name)})
	return nil, nil
}
