package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// TrashDir is where pruned files wait, under DIR/.quak, in one folder per
// day (YYYY-MM-DD) keeping their paths relative to DIR.
const TrashDir = "trash"

// DefaultMaxDelete is how many album entries one run may prune at most.
const DefaultMaxDelete = 100

// pruneItem is one album copy (or a whole deleted album's folder) to move.
type pruneItem struct {
	file   *state.File // nil for an album folder
	cid    int64
	folder string   // the album's folder
	names  []string // parts and the sidecar, relative to folder; nil: the whole folder
}

// prune moves what the server deleted into the trash: album copies of
// files removed from an album or trashed (matched by file id, never by
// path) and the folders of deleted albums. It runs only after a complete,
// error-free listing, and moves nothing when more than MaxDelete album
// copies would go.
func (r *run) prune() error {
	switch {
	case r.sum.AlbumsFailed > 0 || r.sum.Failed > 0:
		return r.refusePrune("this run had errors; quak prunes only after a complete, error-free listing")
	case r.vanished > 0:
		return r.refusePrune("an album vanished while it was being listed; quak prunes only after a complete, error-free listing")
	case !r.o.Filter.Albums.Empty() || r.o.Filter.NoShared || r.o.Filter.NoHidden || r.o.Filter.NoArchived:
		return r.refusePrune("album filters narrowed the listing; quak prunes only after listing every album")
	}
	colls, err := r.st.Collections()
	if err != nil {
		return err
	}
	var items []pruneItem
	entries := 0
	err = r.st.Files(func(f *state.File) error {
		for cid, e := range f.Entries {
			c := colls[cid]
			if c == nil || (!e.Deleted && !c.Deleted) {
				continue
			}
			entries++
			if c.Deleted {
				continue // moved with its album's folder
			}
			names := append(append([]string{}, e.Parts...), filepath.Join(".meta", e.Name+".json"))
			items = append(items, pruneItem{file: f, cid: cid, folder: c.Folder, names: names})
		}
		return nil
	})
	if err != nil {
		return err
	}
	var albums []*state.Collection
	for _, c := range colls {
		if c.Deleted && !c.Pruned {
			albums = append(albums, c)
		}
	}
	sort.Slice(albums, func(i, j int) bool { return albums[i].ID < albums[j].ID })
	sort.Slice(items, func(i, j int) bool {
		if items[i].file.ID != items[j].file.ID {
			return items[i].file.ID < items[j].file.ID
		}
		return items[i].cid < items[j].cid
	})
	if entries > r.o.MaxDelete {
		return r.refusePrune(fmt.Sprintf("%d album entries were deleted on the server, more than --max-delete %d; nothing was moved (raise --max-delete to prune them)",
			entries, r.o.MaxDelete))
	}
	day := r.o.Now().UTC().Format("2006-01-02")
	trash := filepath.Join(r.dir, StateDir, TrashDir, day)
	for _, it := range items {
		for _, name := range it.names {
			if err := r.toTrash(trash, it.folder, name); err != nil {
				return err
			}
		}
		rec := *it.file
		rec.Entries = map[int64]*state.Entry{}
		for k, v := range it.file.Entries {
			if k != it.cid {
				rec.Entries[k] = v
			}
		}
		if err := r.commit([]*state.File{&rec}, nil); err != nil {
			return err
		}
		*it.file = rec // later items of the same file build on this one
		r.sum.Pruned++
		r.emit(Event{Kind: FilePruned, FileID: rec.ID, CollectionID: it.cid, Path: filepath.Join(it.folder, it.names[0])})
	}
	for _, c := range albums {
		if err := r.toTrash(trash, "", c.Folder); err != nil {
			return err
		}
		var files []*state.File
		err := r.st.Files(func(f *state.File) error {
			if f.Entries[c.ID] != nil {
				delete(f.Entries, c.ID)
				files = append(files, f)
				r.sum.Pruned++
			}
			return nil
		})
		if err != nil {
			return err
		}
		c.Pruned = true
		if err := r.commit(files, c); err != nil {
			return err
		}
		r.emit(Event{Kind: AlbumPruned, Album: c.Name, CollectionID: c.ID, Path: c.Folder})
	}
	return nil
}

func (r *run) refusePrune(why string) error {
	r.sum.PruneRefused = why
	r.emit(Event{Kind: PruneRefused, Err: errors.New(why)})
	return nil
}

// toTrash moves DIR/folder/name to trash/folder/name, keeping the path and
// never overwriting: a name already in today's trash gets " (2)", " (3)"…
func (r *run) toTrash(trash, folder, name string) error {
	from, err := layout.Join(r.dir, folder, name)
	if err != nil {
		return err
	}
	if !r.exists(from) {
		return nil
	}
	if r.dry() {
		r.note(from, false)
		return nil
	}
	to, err := layout.Join(trash, folder, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	ext := filepath.Ext(to)
	base := strings.TrimSuffix(to, ext)
	for n := 2; ; n++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("moving %s to the trash: %w", filepath.Join(folder, name), err)
	}
	r.mu.Lock()
	r.dirty[filepath.Dir(from)] = true
	r.dirty[filepath.Dir(to)] = true
	r.mu.Unlock()
	return nil
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
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(abs, StateDir)); err != nil {
		return nil, &DirError{Dir: dir, Reason: "holds no quak backup", Err: err}
	}
	if !dry {
		unlock, err := Lock(abs)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	root := filepath.Join(abs, StateDir, TrashDir)
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
