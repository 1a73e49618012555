package backup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

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
	root      string // DIR, absolute
	trash     string // DIR/.quak/trash
	st        *state.Store
	lib       Library
	policy    retry.Policy
	filter    filter.Set
	maxDelete int
	now       func() time.Time
	seen      *proof
	views     *views.Keeper
	disk      disk
	down      *outage
	tally     *tally
	commit    func([]*state.File, *state.Collection) error
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
	case !pr.filter.Albums.Empty() || pr.filter.NoShared || pr.filter.NoHidden || pr.filter.NoArchived:
		why = "album filters narrowed the listing; quak prunes only after listing every album"
	case len(items) > pr.maxDelete:
		why = fmt.Sprintf("%d album entries were deleted on the server, more than --max-delete %d; nothing was moved (raise --max-delete to prune them)",
			len(items), pr.maxDelete)
	}
	if why != "" {
		for _, it := range items {
			pr.tally.emit(Event{Kind: WouldPrune, FileID: it.file.ID, CollectionID: it.cid, Album: it.album, Title: it.title, Path: it.path()})
		}
		return pr.refusePrune(why)
	}
	day := pr.now().UTC().Format("2006-01-02")
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
		for _, cid := range slices.Sorted(maps.Keys(f.Entries)) {
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
		it.xmp, it.takeout = pr.views.OwnSidecars(colls[it.cid], it.file.Entries[it.cid])
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

// proven reports whether this run proves an album copy deleted; a copy it
// cannot prove stays where it is, with a PruneKept event saying why, and a
// mark the server contradicts (the entry is live) is cleared.
func (pr *pruner) proven(ctx context.Context, it pruneItem, c *state.Collection) (bool, error) {
	kept := func(why string) (bool, error) {
		pr.tally.emit(Event{Kind: PruneKept, FileID: it.file.ID, CollectionID: it.cid, Album: it.album, Title: it.title, Path: it.path(), Err: errors.New(why)})
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
		_, err := pr.lib.CollectionFile(ctx, it.cid, it.file.ID)
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
			if p, err := layout.Join(pr.root, it.folder, name); err != nil || !pr.views.SidecarOwnedBy(p, it.file.ID) {
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
	pr.tally.emit(Event{Kind: FilePruned, FileID: rec.ID, CollectionID: it.cid, Album: it.album, Title: it.title, Path: it.path()})
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
	if name := pr.views.OwnAlbumFile(c); name != "" {
		if _, err := pr.toTrash(trash, c.Folder, name); err != nil {
			return err
		}
	}
	if dir, err := layout.Join(pr.root, c.Folder); err == nil {
		pr.disk.RemoveDir(filepath.Join(dir, ".meta")) // only when empty
		pr.disk.RemoveDir(dir)
	}
	c.Pruned = true
	if err := pr.commit(nil, c); err != nil {
		return err
	}
	pr.tally.emit(Event{Kind: AlbumPruned, Album: c.Name, CollectionID: c.ID, Path: c.Folder})
	return nil
}

func (pr *pruner) refusePrune(why string) error {
	pr.tally.count(func(s *Summary) { s.PruneRefused = why })
	pr.tally.emit(Event{Kind: PruneRefused, Err: errors.New(why)})
	return nil
}

// toTrash moves DIR/folder/name to trash/folder/name, keeping the path and
// never overwriting: a name already in today's trash gets " (2)", " (3)"…
// It returns where the file went, relative to DIR ("" when there was
// nothing to move, or in a dry run).
func (pr *pruner) toTrash(trash, folder, name string) (string, error) {
	from, err := layout.Join(pr.root, folder, name)
	if err != nil {
		return "", err
	}
	if !pr.disk.Exists(from) {
		return "", nil
	}
	to, err := layout.Join(trash, folder, name)
	if err != nil {
		return "", err
	}
	if to, err = pr.disk.ToTrash(from, to); err != nil || to == "" {
		if err != nil {
			err = fmt.Errorf("moving %s to the trash: %w", filepath.Join(folder, name), err)
		}
		return "", err
	}
	return filepath.Rel(pr.root, to)
}

// TrashDay is one day of DIR's trash: its name (YYYY-MM-DD), and the files
// in it (paths relative to the day's folder) with their total size.
type TrashDay struct {
	Name  string
	Files []string
	Bytes int64
}

// EmptyTrash deletes the days of DIR's trash from before cutoff and
// returns them. It takes DIR's lock. With dry, it deletes nothing, takes
// no lock, and returns what it would delete.
func EmptyTrash(dir string, cutoff time.Time, dry bool) ([]TrashDay, error) {
	f := folder.At(dir)
	if _, err := os.Stat(f.StateDir()); err != nil {
		return nil, &DirError{Dir: dir, Reason: "holds no quak backup", Err: err}
	}
	if err := f.CheckLinks(); err != nil {
		return nil, err
	}
	if !dry {
		unlock, err := f.LockFor("prune-trash")
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	root := f.Trash()
	days, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []TrashDay
	for _, d := range days {
		day, err := time.Parse("2006-01-02", d.Name())
		// A day goes once all of it is older than cutoff.
		if err != nil || !d.IsDir() || day.AddDate(0, 0, 1).After(cutoff) {
			continue
		}
		td, err := trashDay(root, d.Name())
		if err != nil {
			return out, err
		}
		if !dry {
			if err := os.RemoveAll(filepath.Join(root, d.Name())); err != nil {
				return out, err
			}
		}
		out = append(out, td)
	}
	return out, nil
}

// trashDay lists the files of a day of the trash.
func trashDay(root, name string) (TrashDay, error) {
	td := TrashDay{Name: name}
	base := filepath.Join(root, name)
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		if fi, err := d.Info(); err == nil {
			td.Bytes += fi.Size()
		}
		td.Files = append(td.Files, rel)
		return nil
	})
	return td, err
}
