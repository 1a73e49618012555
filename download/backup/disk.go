package backup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/livephoto"
)

// disk is every change a run makes to the backup folder. A real run
// writes (realDisk); a dry run only notes what would change, so that
// later decisions see it as done (dryDisk). Nothing else in a run
// writes, renames or removes anything under DIR.
type disk interface {
	// exists reports whether path exists, as it does after this run's
	// changes; a symbolic link counts as there.
	exists(path string) bool
	// mkdirAll makes dir and its missing parents with mode.
	mkdirAll(dir string, mode os.FileMode) error
	// writeFile writes a small file (a sidecar) atomically, making its
	// folder.
	writeFile(path string, b []byte) error
	// linkOrCopy makes dst the same file as src: a hard link, or a copy
	// where the file system has none (copied says which).
	linkOrCopy(src, dst string) (copied bool, err error)
	rename(from, to string) error
	remove(path string)
	chtimes(path string, t time.Time) error
	// changed notes folders whose entries changed by other means (a
	// download renamed into them), for the next commit to sync.
	changed(dirs ...string)
	// removeDir removes dir if it is empty, and reports whether it did.
	removeDir(dir string) bool
	// toTrash moves from to to, or to a numbered name beside it, never
	// replacing a file, and returns where it went ("" when nothing moved).
	toTrash(from, to string) (string, error)
	// holds reports whether the regular file at path hashes to one of the
	// hashes in want (an image:video pair counts either).
	holds(path, want string) bool
	// saveViews remembers the folder's views.
	saveViews(v folder.ViewOptions) error
	// sync fsyncs every folder changed since the last sync, before a
	// commit records what is in them.
	sync() error
}

// removeIfExists removes a file of quak's making, if it is there.
func removeIfExists(d disk, path string) bool {
	if !d.exists(path) {
		return false
	}
	d.remove(path)
	d.changed(filepath.Dir(path))
	return true
}

// realDisk writes to the backup folder, keeping track of the folders whose
// entries changed until the next commit syncs them.
type realDisk struct {
	f     *folder.Folder
	mu    sync.Mutex
	dirty map[string]bool
}

func newRealDisk(f *folder.Folder) *realDisk { return &realDisk{f: f, dirty: map[string]bool{}} }

func (d *realDisk) exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// mkdirAll marks the folder holding each folder it made: a new folder's
// name lives in its parent, up to the backup folder itself.
func (d *realDisk) mkdirAll(dir string, mode os.FileMode) error {
	var made []string
	for p := dir; strings.HasPrefix(p, d.f.Dir+string(filepath.Separator)); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			break
		}
		made = append(made, p)
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	for _, p := range made {
		d.changed(filepath.Dir(p))
	}
	return nil
}

func (d *realDisk) writeFile(path string, b []byte) error {
	if err := d.mkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := durable.WriteFile(d.f.Temp(), path, b, 0o644); err != nil {
		return err
	}
	d.changed(filepath.Dir(path))
	return nil
}

func (d *realDisk) linkOrCopy(src, dst string) (bool, error) { return linkOrCopy(d.f.Temp(), src, dst) }
func (d *realDisk) rename(from, to string) error             { return os.Rename(from, to) }
func (d *realDisk) remove(path string)                       { _ = removeFile(path) }
func (d *realDisk) chtimes(path string, t time.Time) error   { return os.Chtimes(path, t, t) }
func (d *realDisk) saveViews(v folder.ViewOptions) error     { return d.f.WriteViewOptions(v) }

func (d *realDisk) changed(dirs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dir := range dirs {
		d.dirty[dir] = true
	}
}

func (d *realDisk) removeDir(dir string) bool {
	if os.Remove(dir) != nil {
		return false
	}
	d.mu.Lock()
	delete(d.dirty, dir) // gone: nothing to sync
	d.dirty[filepath.Dir(dir)] = true
	d.mu.Unlock()
	return true
}

func (d *realDisk) toTrash(from, to string) (string, error) {
	if err := d.mkdirAll(filepath.Dir(to), 0o700); err != nil {
		return "", err
	}
	to, err := moveNoReplace(from, to)
	if err != nil {
		return "", err
	}
	d.changed(filepath.Dir(from), filepath.Dir(to))
	return to, nil
}

func (d *realDisk) holds(path, want string) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	h, err := download.HashFile(path)
	if err != nil {
		return false
	}
	for _, w := range strings.Split(want, ":") { // a live photo's parts: image:video
		if livephoto.HashMatches(w, h) {
			return true
		}
	}
	return false
}

// syncDir is durable.SyncDir; tests record what it syncs.
var syncDir = durable.SyncDir

func (d *realDisk) sync() error {
	d.mu.Lock()
	dirs := d.dirty
	d.dirty = map[string]bool{}
	d.mu.Unlock()
	for dir := range dirs {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("syncing a folder before recording what is in it (removed during the run?): %w", err)
		}
	}
	return nil
}

// removeFile is os.Remove; tests replace it to model a case-insensitive
// file system.
var removeFile = os.Remove
