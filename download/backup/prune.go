package backup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// DefaultMaxDelete is how many album entries one run may prune at most.
const DefaultMaxDelete = 100

// pruneItem is one album copy to move: a file's entry in an album, the
// parts and sidecar quak saved for it, and the XMP and Takeout sidecars it
// keeps beside each part.
type pruneItem struct {
	file   *state.File
	cid    int64
	folder string // the album's folder
	album  string // the album's name
	title  string
	names  []string // parts, then the sidecar, relative to folder
	// xmp and takeout name each part's XMP and Takeout sidecar ("" for
	// none), nil where this run's options keep none.
	xmp, takeout []string
}

func (it pruneItem) path() string { return filepath.Join(it.folder, it.names[0]) }

// pruner moves what the server deleted into the trash, once this run's
// listing proves it deleted.
type pruner struct {
	*job
	seen  *listing
	trash string // DIR/.quak/trash
}

// hadErrors reports whether any file or album failed in this run.
func (pr *pruner) hadErrors() bool {
	var n int
	pr.tally.count(func(s *Summary) { n = s.Failed + s.AlbumsFailed })
	return n > 0
}

// prune moves what the server deleted into the trash: album copies of
// files removed from an album or trashed, and the files quak saved in
// deleted albums, each matched by file id, never by path (a user's own
// files in an album folder stay where they are). It runs only after a
// complete, error-free run; every album copy counts against MaxDelete, and
// above it nothing moves. Each copy moves only when this run proves it
// deleted: its album listed as deleted now, its deletion in this run's
// listing, or, for a mark an earlier run left, the server confirming now
// that the entry is gone. A refusal lists what would have moved.
func (pr *pruner) prune(ctx context.Context) error {
	colls, err := pr.st.Collections()
	if err != nil {
		return err
	}
	items, albums, err := pr.pruneCandidates(colls)
	if err != nil {
		return err
	}
	why := ""
	switch {
	case pr.hadErrors():
		why = "this run had errors; quak prunes only after a complete, error-free listing"
	case pr.seen.vanished > 0:
		why = "an album vanished while it was being listed; quak prunes only after a complete, error-free listing"
	case !pr.o.Filter.Albums.Empty() || pr.o.Filter.NoShared || pr.o.Filter.NoHidden || pr.o.Filter.NoArchived:
		why = "album filters narrowed the listing; quak prunes only after listing every album"
	case len(items) > pr.o.MaxDelete:
		why = fmt.Sprintf("%d album entries were deleted on the server, more than --max-delete %d; nothing was moved (raise --max-delete to prune them)",
			len(items), pr.o.MaxDelete)
	}
	if why != "" {
		for _, it := range items {
			pr.emit(Event{Kind: WouldPrune, FileID: it.file.ID, CollectionID: it.cid, Album: it.album, Title: it.title, Path: it.path()})
		}
		return pr.refusePrune(why)
	}
	day := pr.o.Now().UTC().Format("2006-01-02")
	trash := filepath.Join(pr.trash, day)
	for _, it := range items {
		ok, err := pr.proven(ctx, it, colls[it.cid])
		if err != nil {
			return err
		}
		if ok {
			if err := pr.pruneEntry(trash, it); err != nil {
				return err
			}
		}
	}
	for _, c := range albums {
		if err := pr.pruneAlbum(trash, c); err != nil {
			return err
		}
	}
	return nil
}

// pruneCandidates lists every album copy marked deleted (in a live album,
// or in a deleted album not pruned yet), in file id order, and the deleted
// albums this run proves deleted.
func (pr *pruner) pruneCandidates(colls map[int64]*state.Collection) ([]pruneItem, []*state.Collection, error) {
	var items []pruneItem
	err := pr.st.Files(func(f *state.File) error { // in file id order
		cids := make([]int64, 0, len(f.Entries))
		for cid := range f.Entries {
			cids = append(cids, cid)
		}
		sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
		for _, cid := range cids {
			c, e := colls[cid], f.Entries[cid]
			if c == nil || c.Pruned || (!e.Deleted && !c.Deleted) {
				continue
			}
			names := append(append([]string{}, e.Parts...), filepath.Join(".meta", e.Name+".json"))
			items = append(items, pruneItem{file: f, cid: cid, folder: c.Folder, album: c.Name, title: e.Meta.Title, names: names})
		}
		return nil
	})
	for i := range items {
		it := &items[i]
		it.xmp, it.takeout = pr.ownSidecars(colls[it.cid], it.file.Entries[it.cid])
	}
	var albums []*state.Collection
	for _, c := range colls {
		if c.Deleted && !c.Pruned && pr.seen.tombstones[c.ID] {
			albums = append(albums, c)
		}
	}
	sort.Slice(albums, func(i, j int) bool { return albums[i].ID < albums[j].ID })
	return items, albums, err
}

// ownSidecars names the XMP and Takeout sidecars quak recorded as its own
// beside each of e's parts in album c ("" for a part with none; nil for a
// kind the options do not keep): the files of quak's own that go to the
// trash with them. A name a saved file of the album has is that file's,
// never a sidecar; a file quak did not record, or one another tool
// rewrote since, is the user's.
func (pr *pruner) ownSidecars(c *state.Collection, e *state.Entry) (xmp, takeout []string) {
	dir, err := layout.Join(pr.dir, c.Folder)
	if err != nil {
		return nil, nil
	}
	names := func(on bool, name func(string) string) []string {
		if !on {
			return nil
		}
		out := make([]string, len(e.Parts))
		for i, p := range e.Parts {
			if n := name(p); slices.Contains(e.Sidecars, n) && !pr.names.taken(c.ID, n) && !usersNow(e, filepath.Join(dir, n), n, nil) {
				out[i] = n
			}
		}
		return out
	}
	return names(pr.o.Views.XMP, sidecars.XMPName), names(pr.o.Views.style() == sidecars.Takeout, sidecars.TakeoutName)
}

// proven reports whether this run proves an album copy deleted; a copy it
// cannot prove stays where it is, with a PruneKept event saying why, and a
// mark the server contradicts (the entry is live) is cleared.
func (pr *pruner) proven(ctx context.Context, it pruneItem, c *state.Collection) (bool, error) {
	kept := func(why string) (bool, error) {
		pr.emit(Event{Kind: PruneKept, FileID: it.file.ID, CollectionID: it.cid, Album: it.album, Title: it.title, Path: it.path(), Err: errors.New(why)})
		return false, nil
	}
	switch {
	case c.Deleted && pr.seen.tombstones[c.ID]:
		return true, nil
	case c.Deleted:
		return kept("its album is not listed as deleted by this run (it is missing from the listing, or its listing failed)")
	case pr.seen.goneNow[entryKey{it.file.ID, it.cid}]:
		return true, nil
	}
	err := retry.Do(ctx, pr.policy, func(ctx context.Context) error {
		_, err := pr.o.Library.CollectionFile(ctx, it.cid, it.file.ID)
		return err
	})
	if uerr := pr.down.observe(ctx, err); uerr != nil {
		return false, uerr // every further confirmation would fail the same way
	}
	var ae *errs.ApiError
	switch {
	case errors.As(err, &ae) && ae.Status == 404:
		return true, nil
	case err == nil:
		rec := *it.file
		rec.Entries = map[int64]*state.Entry{}
		for k, v := range it.file.Entries {
			rec.Entries[k] = v
		}
		e := *rec.Entries[it.cid]
		e.Deleted = false
		rec.Entries[it.cid] = &e
		if err := pr.commit([]*state.File{&rec}, nil); err != nil {
			return false, err
		}
		*it.file = rec
		return kept("the server lists it in its album: an earlier listing marked it deleted wrongly")
	case fatal(ctx, err):
		return false, err
	}
	return kept(fmt.Sprintf("its deletion, seen by an earlier run, could not be confirmed: %v", err))
}

// pruneEntry moves an album copy's parts and sidecars into the trash,
// remembers where they went, and drops the entry (the commit takes the file
// out of the date view when no album copy is left).
func (pr *pruner) pruneEntry(trash string, it pruneItem) error {
	tc := state.TrashCopy{CollectionID: it.cid}
	for i, name := range it.names {
		if i == len(it.names)-1 {
			if p, err := layout.Join(pr.dir, it.folder, name); err != nil || !metaOwnedBy(p, it.file.ID) {
				continue // another file's `ente export` sidecar
			}
		}
		rel, err := pr.toTrash(trash, it.folder, name)
		if err != nil {
			return err
		}
		switch {
		case rel == "":
		case i == len(it.names)-1:
			tc.Sidecar = rel
		default:
			tc.Parts = append(tc.Parts, rel)
		}
	}
	var err error
	if tc.XMP, err = pr.sidecarsToTrash(trash, it.folder, it.xmp); err != nil {
		return err
	}
	if tc.Takeout, err = pr.sidecarsToTrash(trash, it.folder, it.takeout); err != nil {
		return err
	}
	rec := *it.file
	rec.Entries = map[int64]*state.Entry{}
	for k, v := range it.file.Entries {
		if k != it.cid {
			rec.Entries[k] = v
		}
	}
	if len(tc.Parts) == len(it.names)-1 {
		rec.Trash = append(append([]state.TrashCopy{}, rec.Trash...), tc)
	}
	if err := pr.commit([]*state.File{&rec}, nil); err != nil {
		return err
	}
	*it.file = rec // later items of the same file build on this one
	pr.tally.count(func(s *Summary) { s.Pruned++ })
	pr.emit(Event{Kind: FilePruned, FileID: rec.ID, CollectionID: it.cid, Album: it.album, Title: it.title, Path: it.path()})
	return nil
}

// sidecarsToTrash moves the sidecars named (one per part, "" for none) from
// folder into the trash and returns where each went ("" for one not
// there), or nil when none moved.
func (pr *pruner) sidecarsToTrash(trash, folder string, names []string) ([]string, error) {
	out := make([]string, len(names))
	moved := false
	for i, name := range names {
		if name == "" {
			continue
		}
		rel, err := pr.toTrash(trash, folder, name)
		if err != nil {
			return nil, err
		}
		out[i], moved = rel, moved || rel != ""
	}
	if !moved {
		return nil, nil
	}
	return out, nil
}

// pruneAlbum ends the pruning of a deleted album, once its files are in
// the trash: its album_meta.json follows them, and its folder goes only if
// nothing of the user's is left in it.
func (pr *pruner) pruneAlbum(trash string, c *state.Collection) error {
	left := false
	err := pr.st.Files(func(f *state.File) error {
		left = left || f.Entries[c.ID] != nil
		return nil
	})
	if err != nil || left {
		return err // a copy not proven deleted: the album stays as it is
	}
	if _, err := pr.toTrash(trash, c.Folder, filepath.Join(".meta", "album_meta.json")); err != nil {
		return err
	}
	if p, err := layout.Join(pr.dir, c.Folder, sidecars.TakeoutAlbumFile); err == nil && quaksAlbumFile(c, p) && !pr.names.taken(c.ID, sidecars.TakeoutAlbumFile) {
		if _, err := pr.toTrash(trash, c.Folder, sidecars.TakeoutAlbumFile); err != nil {
			return err
		}
	}
	if dir, err := layout.Join(pr.dir, c.Folder); err == nil {
		pr.disk.removeDir(filepath.Join(dir, ".meta")) // only when empty
		pr.disk.removeDir(dir)
	}
	c.Pruned = true
	if err := pr.commit(nil, c); err != nil {
		return err
	}
	pr.emit(Event{Kind: AlbumPruned, Album: c.Name, CollectionID: c.ID, Path: c.Folder})
	return nil
}

func (pr *pruner) refusePrune(why string) error {
	pr.tally.count(func(s *Summary) { s.PruneRefused = why })
	pr.emit(Event{Kind: PruneRefused, Err: errors.New(why)})
	return nil
}

// toTrash moves DIR/folder/name to trash/folder/name, keeping the path and
// never overwriting: a name already in today's trash gets " (2)", " (3)"…
// It returns where the file went, relative to DIR ("" when there was
// nothing to move, or in a dry run).
func (pr *pruner) toTrash(trash, folder, name string) (string, error) {
	from, err := layout.Join(pr.dir, folder, name)
	if err != nil {
		return "", err
	}
	if !pr.disk.exists(from) {
		return "", nil
	}
	to, err := layout.Join(trash, folder, name)
	if err != nil {
		return "", err
	}
	if to, err = pr.disk.toTrash(from, to); err != nil || to == "" {
		if err != nil {
			err = fmt.Errorf("moving %s to the trash: %w", filepath.Join(folder, name), err)
		}
		return "", err
	}
	return filepath.Rel(pr.dir, to)
}
