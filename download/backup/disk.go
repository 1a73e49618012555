package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
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
// entries changed until the next commit syncs them. It never writes,
// links or sets a time through a symbolic link it did not make: every
// folder on the way from DIR is checked first (and remembered as checked).
type realDisk struct {
	f     *folder.Folder
	mu    sync.Mutex
	dirty map[string]bool
	plain map[string]bool // folders under DIR seen to be no symbolic link
}

func newRealDisk(f *folder.Folder) *realDisk {
	return &realDisk{f: f, dirty: map[string]bool{}, plain: map[string]bool{}}
}

// LinkError reports a symbolic link where quak would write, link or set a
// time: it never follows one it did not make.
type LinkError struct {
	Path string // relative to DIR
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link, which quak never follows", e.Path)
}

// Unwrap makes a LinkError one of layout.ErrOutside: it would lead out of
// the backup folder.
func (e *LinkError) Unwrap() error { return layout.ErrOutside }

// noLink checks that no folder on the way from DIR to path is a symbolic
// link, nor path itself when self. A missing folder ends the check: quak
// makes the rest.
func (d *realDisk) noLink(path string, self bool) error {
	rel, err := filepath.Rel(d.f.Dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s", layout.ErrOutside, path)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if !self {
		parts = parts[:len(parts)-1]
	}
	p := d.f.Dir
	for _, part := range parts {
		p = filepath.Join(p, part)
		d.mu.Lock()
		known := d.plain[p]
		d.mu.Unlock()
		if known {
			continue
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode()&os.ModeSymlink != 0:
			r, _ := filepath.Rel(d.f.Dir, p)
			return &LinkError{Path: r}
		case fi.IsDir():
			d.mu.Lock()
			d.plain[p] = true
			d.mu.Unlock()
		}
	}
	return nil
}

// forgetPlain drops what was known of dir and the folders under it.
func (d *realDisk) forgetPlain(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for p := range d.plain {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			delete(d.plain, p)
		}
	}
}

func (d *realDisk) exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// mkdirAll marks the folder holding each folder it made: a new folder's
// name lives in its parent, up to the backup folder itself.
func (d *realDisk) mkdirAll(dir string, mode os.FileMode) error {
	if err := d.noLink(dir, true); err != nil {
		return err
	}
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
	if err := d.noLink(path, false); err != nil {
		return err
	}
	if err := d.mkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := durable.WriteFile(d.f.Temp(), path, b, 0o644); err != nil {
		return err
	}
	d.changed(filepath.Dir(path))
	return nil
}

// linkOrCopy links or copies src, which must be no symbolic link, to dst.
func (d *realDisk) linkOrCopy(src, dst string) (bool, error) {
	if err := d.noLink(src, true); err != nil {
		return false, err
	}
	if err := d.noLink(dst, false); err != nil {
		return false, err
	}
	return linkOrCopy(d.f.Temp(), src, dst)
}

func (d *realDisk) rename(from, to string) error {
	if err := d.noLink(from, false); err != nil {
		return err
	}
	if err := d.noLink(to, false); err != nil {
		return err
	}
	d.forgetPlain(from)
	d.forgetPlain(to)
	return os.Rename(from, to)
}

// remove removes path (a symbolic link itself, never what it points to).
func (d *realDisk) remove(path string) {
	if d.noLink(path, false) == nil {
		_ = removeFile(path)
	}
}

func (d *realDisk) chtimes(path string, t time.Time) error {
	if err := d.noLink(path, true); err != nil {
		return err
	}
	return os.Chtimes(path, t, t)
}

func (d *realDisk) saveViews(v folder.ViewOptions) error { return d.f.WriteViewOptions(v) }

func (d *realDisk) changed(dirs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dir := range dirs {
		d.dirty[dir] = true
	}
}

func (d *realDisk) removeDir(dir string) bool {
	if d.noLink(dir, true) != nil || os.Remove(dir) != nil {
		return false
	}
	d.forgetPlain(dir)
	d.mu.Lock()
	delete(d.dirty, dir) // gone: nothing to sync
	d.dirty[filepath.Dir(dir)] = true
	d.mu.Unlock()
	return true
}

func (d *realDisk) toTrash(from, to string) (string, error) {
	if err := d.noLink(from, false); err != nil {
		return "", err
	}
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
