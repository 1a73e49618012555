package backup

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// update handles an entry of a file whose content is saved already: a copy
// for a new album, a metadata edit, or nothing. again asks for a download
// (the local copies are gone).
func (r *run) update(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (rec *state.File, again bool, err error) {
	e := sf.Entries[c.ID]
	if e != nil && !r.partsExist(c, e) {
		return nil, true, nil
	}
	if e == nil {
		return r.link(it, sf, a, c)
	}
	if !e.Deleted && metaEqual(e.Meta, it.Meta) {
		return nil, false, nil
	}
	rec = record(it, sf)
	ne := rec.Entries[c.ID]
	ne.Deleted = false
	dir, err := r.albumDir(c)
	if err != nil {
		return nil, false, err
	}
	if ne.Meta.Title != it.Meta.Title {
		names := r.caseOnly(c, ne.Parts, it.Meta.Title)
		if names != nil {
			// The same file under a name that differs only in case: on a
			// case-insensitive file system the old names are the new ones,
			// so what goes is removed first and the parts are renamed, never
			// removed.
			for _, p := range ne.Parts {
				ne.Sidecars = r.dropPartSidecars(dir, p, ne.Sidecars, ne.SidecarHashes)
			}
			r.removeMeta(filepath.Join(dir, ".meta", ne.Name+".json"), it.FileID)
		} else {
			names = r.entryNames(c, nil, it.FileID, it.Meta.Title, partExts(ne.Parts))
		}
		for i, p := range ne.Parts {
			if err := r.rename(filepath.Join(dir, p), filepath.Join(dir, names[i])); err != nil {
				return nil, false, err
			}
		}
		old := *ne
		ne.Name, ne.Parts = names[0], names
		ne.Sidecars = r.dropOld(c, &old, it.FileID, names)
		ne.SidecarHashes = ownHashes(old.SidecarHashes, ne.Sidecars)
		r.emit(Event{Kind: FileRenamed, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Path: filepath.Join(c.Folder, names[0])})
	}
	mtime := micros(it.Meta.CreationTime)
	for _, p := range ne.Parts {
		if err := r.chtimes(filepath.Join(dir, p), mtime); err != nil {
			return nil, false, err
		}
	}
	ne.Meta, rec.Meta = it.Meta, it.Meta
	if err := r.writeSidecar(rec, c, nil); err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	r.sum.Updated++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: MetadataUpdated, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, ne.Name)})
	return rec, false, nil
}

// caseOnly returns the names a title gives an entry's parts when they
// differ from the current ones only in case (IMG.JPG renamed img.jpg),
// else nil.
func (r *run) caseOnly(c *state.Collection, parts []string, title string) []string {
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
	n := r.namer(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range names {
		n.Take(name)
	}
	return names
}

// partExts are the extensions entryNames wants for a file's parts: none for
// a single file (named by its title), each part's own for a live photo.
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

func metaEqual(a, b state.Meta) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Title == b.Title && a.FileType == b.FileType && a.CreationTime == b.CreationTime &&
		a.ModificationTime == b.ModificationTime && a.Caption == b.Caption && a.Hash == b.Hash &&
		eq(a.Latitude, b.Latitude) && eq(a.Longitude, b.Longitude) && a.Offset == b.Offset
}

// link places a file saved for one album into another: hard links to the
// saved parts (copies where links are impossible), never a second download.
func (r *run) link(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (*state.File, bool, error) {
	src, srcDir := r.source(sf)
	if src == nil {
		if rec := r.fromTrash(it, sf, a, c); rec != nil {
			return rec, false, nil
		}
		return nil, true, nil
	}
	dir, err := r.albumDir(c)
	if err != nil {
		return nil, false, err
	}
	names := r.entryNames(c, nil, it.FileID, it.Meta.Title, partExts(src.Parts))
	copied := false
	for i, p := range src.Parts {
		cp, err := r.linkOrCopy(filepath.Join(srcDir, p), filepath.Join(dir, names[i]))
		if err != nil {
			return nil, false, err
		}
		copied = copied || cp
	}
	rec := record(it, sf)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta, Copy: copied}
	if err := r.writeSidecar(rec, c, nil); err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	r.sum.Linked++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileLinked, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec, false, nil
}

// relink refreshes a file's copy in album cid from its new copy in c.
func (r *run) relink(rec *state.File, c *state.Collection, cid int64) error {
	oc := r.colls[cid]
	e, src := rec.Entries[cid], rec.Entries[c.ID]
	if oc == nil || len(e.Parts) != len(src.Parts) {
		return nil
	}
	from, err := r.albumDir(c)
	if err != nil {
		return err
	}
	to, err := r.albumDir(oc)
	if err != nil {
		return err
	}
	copied := false
	for i := range src.Parts {
		cp, err := r.linkOrCopy(filepath.Join(from, src.Parts[i]), filepath.Join(to, e.Parts[i]))
		if err != nil {
			return err
		}
		copied = copied || cp
	}
	e.Copy, e.Stale, e.Meta = copied, false, rec.Meta
	return r.writeSidecar(rec, oc, nil)
}

// relinkFailed marks rec's copy in album cid stale and counts the failure:
// the run ends partial, and the next one tries again (relinkStale).
func (r *run) relinkFailed(rec *state.File, cid int64, err error) {
	e, oc := rec.Entries[cid], r.colls[cid]
	e.Stale = true
	album, path := "", e.Name
	if oc != nil {
		album, path = oc.Name, filepath.Join(oc.Folder, e.Name)
	}
	err = fmt.Errorf("refreshing %s with the file's new content: %w", path, err)
	reason := Reason(err)
	r.mu.Lock()
	r.sum.Failed++
	r.sum.Failures = append(r.sum.Failures, folder.Failure{FileID: rec.ID, Album: album, Title: rec.Meta.Title, Reason: reason, Error: err.Error()})
	r.sum.Reasons[reason]++
	r.touched[rec.ID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileFailed, Album: album, Title: rec.Meta.Title, FileID: rec.ID, CollectionID: cid, Err: err})
}

// relinkStale refreshes, before anything is listed, the album copies an
// earlier run failed to refresh with their file's new content, from a
// current copy; nothing is downloaded. A copy that fails again is counted
// again.
func (r *run) relinkStale() error {
	var ids []int64
	err := r.st.Briefs(func(b state.Brief) error {
		if b.Stale() && (b.Status == state.Saved || b.Status == state.HashMismatch) {
			ids = append(ids, b.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var stale []*state.File
	for _, id := range ids {
		f, err := r.st.File(id)
		if err != nil {
			return err
		}
		if f != nil && saved(f) {
			stale = append(stale, f)
		}
	}
	for _, f := range stale {
		src, _ := r.source(f)
		if src == nil {
			continue // no current copy: the next change of the file downloads it
		}
		var srcColl *state.Collection
		for cid, e := range f.Entries {
			if e == src {
				srcColl = r.colls[cid]
			}
		}
		rec := record(&catalog.Item{FileID: f.ID, OwnerID: f.OwnerID}, f)
		cids := make([]int64, 0, len(rec.Entries))
		for cid, e := range rec.Entries {
			if e.Stale && !e.Deleted && r.colls[cid] != nil {
				cids = append(cids, cid)
			}
		}
		sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
		for _, cid := range cids {
			if err := r.relink(rec, srcColl, cid); err != nil {
				if err := r.diskError(err); isDirError(err) {
					return err
				}
				r.relinkFailed(rec, cid, err)
			}
		}
		if err := r.commit([]*state.File{rec}, nil); err != nil {
			return err
		}
	}
	return nil
}

// source finds a current saved copy of the file whose parts exist on disk.
func (r *run) source(sf *state.File) (*state.Entry, string) {
	for cid, e := range sf.Entries {
		c := r.colls[cid]
		if c == nil || e.Stale || !r.partsExist(c, e) {
			continue
		}
		if dir, err := r.albumDir(c); err == nil {
			return e, dir
		}
	}
	return nil, ""
}

func (r *run) partsExist(c *state.Collection, e *state.Entry) bool {
	dir, err := r.albumDir(c)
	if err != nil || len(e.Parts) == 0 {
		return false
	}
	for _, p := range e.Parts {
		if !r.exists(filepath.Join(dir, p)) {
			return false
		}
	}
	return true
}
