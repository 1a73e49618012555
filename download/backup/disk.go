package backup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
)

// disk is every change a run makes to the backup folder. A real run
// writes (realDisk); a dry run only notes what would change, so that
// later decisions see it as done (dryDisk). Nothing else in a run
// writes, renames or removes anything under DIR. Its methods are the
// views' (views.Disk: exists, make folders, write small files, link,
// rename, remove, note changed folders, remove empty ones, remember the
// views) and these.
type disk interface {
	views.Disk
	Chtimes(path string, t time.Time) error
	// ToTrash moves from to to, or to a numbered name beside it, never
	// replacing a file, and returns where it went ("" when nothing moved).
	ToTrash(from, to string) (string, error)
	// Holds reports whether the regular file at path hashes to one of the
	// hashes in want (an image:video pair counts either).
	Holds(path, want string) bool
	// Sync fsyncs every folder changed since the last sync, before a
	// commit records what is in them.
	Sync() error
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

// SymlinkError reports a symbolic link where quak would write, link or set a
// time: it never follows one it did not make.
type SymlinkError struct {
	Path string // relative to DIR
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link, which quak never follows", e.Path)
}

// Unwrap makes a SymlinkError one of layout.ErrOutside: it would lead out of
// the backup folder.
func (e *SymlinkError) Unwrap() error { return layout.ErrOutside }

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
			return &SymlinkError{Path: r}
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

func (d *realDisk) Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// mkdirAll marks the folder holding each folder it made: a new folder's
// name lives in its parent, up to the backup folder itself.
func (d *realDisk) MkdirAll(dir string, mode os.FileMode) error {
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
		d.Changed(filepath.Dir(p))
	}
	return nil
}

func (d *realDisk) WriteFile(path string, b []byte) error {
	if err := d.noLink(path, false); err != nil {
		return err
	}
	if err := d.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := durable.WriteFile(d.f.Temp(), path, b, 0o644); err != nil {
		return err
	}
	d.Changed(filepath.Dir(path))
	return nil
}

// linkOrCopy links or copies src, which must be no symbolic link, to dst.
func (d *realDisk) LinkOrCopy(src, dst string) (bool, error) {
	if err := d.noLink(src, true); err != nil {
		return false, err
	}
	if err := d.noLink(dst, false); err != nil {
		return false, err
	}
	return linkOrCopy(d.f.Temp(), src, dst)
}

func (d *realDisk) Rename(from, to string) error {
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
func (d *realDisk) Remove(path string) {
	if d.noLink(path, false) == nil {
		_ = removeFile(path)
	}
}

func (d *realDisk) Chtimes(path string, t time.Time) error {
	if err := d.noLink(path, true); err != nil {
		return err
	}
	return os.Chtimes(path, t, t)
}

func (d *realDisk) SaveViews(v folder.ViewOptions) error { return d.f.WriteViewOptions(v) }

func (d *realDisk) Changed(dirs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dir := range dirs {
		d.dirty[dir] = true
	}
}

func (d *realDisk) RemoveDir(dir string) bool {
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

func (d *realDisk) ToTrash(from, to string) (string, error) {
	if err := d.noLink(from, false); err != nil {
		return "", err
	}
	if err := d.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return "", err
	}
	to, err := moveNoReplace(from, to)
	if err != nil {
		return "", err
	}
	d.Changed(filepath.Dir(from), filepath.Dir(to))
	return to, nil
}

func (d *realDisk) Holds(path, want string) bool {
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

func (d *realDisk) Sync() error {
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

// dryDisk is a dry run's disk (Options.DryRun): it writes nothing in DIR
// but notes each change in an overlay, so that later decisions in the run
// see it as done. With it, a dry run decides everything a real one would.
type dryDisk struct {
	mu      sync.Mutex
	files   map[string]bool   // path → exists after this run's changes
	aliases map[string]string // a renamed folder's new path → its real one
}

func newDryDisk() *dryDisk {
	return &dryDisk{files: map[string]bool{}, aliases: map[string]string{}}
}

func (d *dryDisk) note(path string, exists bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.files[path] = exists
}

func (d *dryDisk) Exists(path string) bool {
	d.mu.Lock()
	v, ok := d.files[path]
	if !ok {
		for alias, real := range d.aliases {
			if rest, found := strings.CutPrefix(path, alias+string(filepath.Separator)); found {
				path = filepath.Join(real, rest)
			}
		}
		v, ok = d.files[path]
	}
	d.mu.Unlock()
	if ok {
		return v
	}
	_, err := os.Lstat(path)
	return err == nil
}

func (d *dryDisk) Rename(from, to string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aliases[to] = from
	d.files[to] = true
	d.files[from] = false
	return nil
}

func (d *dryDisk) WriteFile(path string, _ []byte) error { d.note(path, true); return nil }

func (d *dryDisk) LinkOrCopy(_, dst string) (bool, error) { d.note(dst, true); return false, nil }

func (d *dryDisk) Remove(path string) { d.note(path, false) }

func (d *dryDisk) ToTrash(from, _ string) (string, error) { d.note(from, false); return "", nil }

func (*dryDisk) MkdirAll(string, os.FileMode) error { return nil }
func (*dryDisk) Chtimes(string, time.Time) error    { return nil }
func (*dryDisk) Changed(...string)                  {}
func (*dryDisk) RemoveDir(string) bool              { return false }
func (*dryDisk) Holds(string, string) bool          { return false } // a dry run reads no content
func (*dryDisk) SaveViews(folder.ViewOptions) error { return nil }
func (*dryDisk) Sync() error                        { return nil }

// hardLink is os.Link; tests replace it to model file systems that cannot
// link.
var hardLink = os.Link

// linkOrCopy makes dst the same file as src: a hard link, or a copy where
// the file system cannot link (copied says which). It goes through a temp
// name in tmpDir, so dst is never half-written and a stale dst is replaced.
func linkOrCopy(tmpDir, src, dst string) (copied bool, err error) {
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(tmpDir, durable.TempPrefix+"link-*")
	if err != nil {
		return false, err
	}
	name := tmp.Name()
	_ = tmp.Close()
	_ = os.Remove(name)
	if err := hardLink(src, name); err != nil {
		if err := copyFile(src, name); err != nil {
			_ = os.Remove(name)
			return false, fmt.Errorf("copying %s: %w", filepath.Base(src), err)
		}
		copied = true
	}
	if err := os.Rename(name, dst); err != nil {
		_ = os.Remove(name)
		return false, err
	}
	return copied, durable.SyncDir(dir)
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	if err = out.Sync(); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// moveNoReplace moves from to to, or to "to (2)", "to (3)"… when that
// name is taken: a hard link, which fails rather than replace, then the
// old name removed; where the file system has no hard links, a rename to
// a name checked free.
func moveNoReplace(from, to string) (string, error) {
	for n := 1; ; n++ {
		cand := numbered(to, n)
		err := hardLink(from, cand)
		switch {
		case err == nil:
			return cand, os.Remove(from)
		case errors.Is(err, os.ErrExist):
			continue
		}
		if _, err := os.Lstat(cand); err == nil {
			continue
		}
		return cand, os.Rename(from, cand)
	}
}

// numbered is path with " (n)" before its extension (n > 1), its name cut
// (at a whole UTF-8 character) so that it still fits layout.MaxName.
func numbered(path string, n int) string {
	if n <= 1 {
		return path
	}
	dir, name := filepath.Split(path)
	ext := filepath.Ext(name)
	if len(ext) > 16 {
		ext = ""
	}
	stem := strings.TrimSuffix(name, ext)
	suffix := fmt.Sprintf(" (%d)", n)
	cut := layout.MaxName - len(suffix) - len(ext)
	if len(stem) > cut {
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		stem = stem[:cut]
	}
	return dir + stem + suffix + ext
}
