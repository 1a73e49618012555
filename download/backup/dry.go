package backup

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/state"
)

// A dry run (Options.DryRun) decides everything a real run would and
// reports it through the same events, but writes nothing in DIR: it works
// on a private copy of the state, takes no lock, and every change to the
// folder goes through the methods below, which only note it in a virtual
// overlay so later decisions in the run see it as done.
type overlay struct {
	mu      sync.Mutex
	files   map[string]bool   // path → exists after this run's changes
	aliases map[string]string // a renamed folder's new path → its real one
}

func (r *run) dry() bool { return r.o.DryRun }

func (r *run) note(path string, exists bool) {
	r.ov.mu.Lock()
	defer r.ov.mu.Unlock()
	r.ov.files[path] = exists
}

// exists reports whether path exists, as it would after this run's changes.
func (r *run) exists(path string) bool {
	if r.dry() {
		r.ov.mu.Lock()
		v, ok := r.ov.files[path]
		if !ok {
			for alias, real := range r.ov.aliases {
				if rest, found := strings.CutPrefix(path, alias+string(filepath.Separator)); found {
					path = filepath.Join(real, rest)
				}
			}
			v, ok = r.ov.files[path]
		}
		r.ov.mu.Unlock()
		if ok {
			return v
		}
	}
	_, err := os.Lstat(path)
	return err == nil
}

func (r *run) rename(from, to string) error {
	if !r.dry() {
		return os.Rename(from, to)
	}
	r.ov.mu.Lock()
	r.ov.aliases[to] = from
	r.ov.files[to] = true
	r.ov.files[from] = false
	r.ov.mu.Unlock()
	return nil
}

// removeFile is os.Remove; tests replace it to model a case-insensitive
// file system.
var removeFile = os.Remove

func (r *run) remove(path string) {
	if r.dry() {
		r.note(path, false)
		return
	}
	_ = removeFile(path)
}

func (r *run) chtimes(path string, t time.Time) error {
	if r.dry() {
		return nil
	}
	return os.Chtimes(path, t, t)
}

func (r *run) linkOrCopy(src, dst string) (bool, error) {
	if r.dry() {
		r.note(dst, true)
		return false, nil
	}
	return linkOrCopy(r.tmp, src, dst)
}

// pretend is a dry run's download: the file is named and recorded as a
// real run would, without a byte fetched. A live photo's parts are named
// from its title (the real names come from its archive).
func (r *run) pretend(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) *state.File {
	old := r.previous(sf, c, it)
	names := named
	if catalog.IsLivePhoto(it.Meta) {
		names = r.entryNames(c, old, it.FileID, it.Meta.Title, []string{strings.ToLower(filepath.Ext(it.Meta.Title)), ".mov"})
	} else if names == nil {
		names = r.entryNames(c, old, it.FileID, it.Meta.Title, []string{""})
	}
	dir, _ := r.albumDir(c)
	for _, n := range names {
		r.note(filepath.Join(dir, n), true)
	}
	rec := record(it, sf)
	rec.Header, rec.Size, rec.Meta, rec.Error, rec.Pending, rec.PendingAlso = keys.EncodeB64(it.Header), it.Size, it.Meta, "", nil, nil
	rec.Status, rec.LocalHash = state.Saved, it.Meta.Hash
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	size := plainSize(it.Size)
	r.mu.Lock()
	r.sum.New++
	r.sum.Bytes += size
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileSaved, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0]), Bytes: size})
	return rec
}
