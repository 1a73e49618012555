// Package durable writes files so that a crash, a full disk or a power
// loss leaves at a path either what was there before or the whole new
// content, never a mix, and takes the locks that keep two writers apart.
// It is the one place quak writes a file atomically or syncs a folder.
package durable

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// TempPrefix starts the name of every temp file quak makes. Temp files
// live in a folder of quak's own; the prefix alone marks nothing as
// quak's (a file from the server may be named so).
const TempPrefix = ".quak-tmp-"

// Temp is a file being written under a temp name, given its final name by
// Commit or removed by Discard.
type Temp struct {
	f *os.File
}

// CreateTemp makes a new temp file in dir, mode 0600 until Commit.
func CreateTemp(dir string) (*Temp, error) {
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return nil, err
	}
	return &Temp{f: f}, nil
}

// Wrap makes an open temp file (one kept for a resumed download, say) a
// Temp.
func Wrap(f *os.File) *Temp { return &Temp{f: f} }

// File is the open temp file, for writing.
func (t *Temp) File() *os.File { return t.f }

// Name is the temp file's path.
func (t *Temp) Name() string { return t.f.Name() }

// Commit gives the file its mode and its final name: fsync, close, rename
// (replacing any file there), then the modification time unless mtime is
// zero. Any error leaves no temp file. The folder is not synced: the
// caller syncs it (SyncDir) before it records the file anywhere a crash
// must not find it missing, once for all it placed there meanwhile.
func (t *Temp) Commit(final string, mode os.FileMode, mtime time.Time) error {
	if err := t.f.Chmod(mode); err != nil {
		t.Discard()
		return err
	}
	if err := t.f.Sync(); err != nil {
		t.Discard()
		return err
	}
	if err := t.f.Close(); err != nil {
		_ = os.Remove(t.f.Name())
		return err
	}
	if err := os.Rename(t.f.Name(), final); err != nil {
		_ = os.Remove(t.f.Name())
		return err
	}
	if mtime.IsZero() {
		return nil
	}
	return os.Chtimes(final, mtime, mtime)
}

// Discard closes and removes the temp file.
func (t *Temp) Discard() {
	_ = t.f.Close()
	_ = os.Remove(t.f.Name())
}

// WriteFile writes b to path atomically with the given mode, through a
// temp file in tmpDir (which must be on path's file system; "" is path's
// own folder). The content never sits in a file looser than 0600. The
// folder holding path is not synced (see Commit).
func WriteFile(tmpDir, path string, b []byte, mode os.FileMode) error {
	if tmpDir == "" {
		tmpDir = filepath.Dir(path)
	}
	t, err := CreateTemp(tmpDir)
	if err != nil {
		return err
	}
	if _, err := t.f.Write(b); err != nil {
		t.Discard()
		return err
	}
	return t.Commit(path, mode, time.Time{})
}

// WriteFileSynced is WriteFile followed by a sync of path's folder: for a
// file that stands alone (a record, a session), not one of many a later
// commit syncs together.
func WriteFileSynced(tmpDir, path string, b []byte, mode os.FileMode) error {
	if err := WriteFile(tmpDir, path, b, mode); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a folder, so that a rename or a new name in it survives a
// crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// ErrHeld reports a lock another process holds.
var ErrHeld = errors.New("lock held by another process")

// maxNote bounds what ReadNote reads of a lock file.
const maxNote = 4096

// holding writes note into the lock file f just locked (a lock file is
// nothing but its lock, so it holds no other content), and returns what
// empties it again and lets the lock go.
func holding(f *os.File, note []byte) func() {
	if note == nil {
		return func() { _ = f.Close() }
	}
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt(note, 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = f.Close()
	}
}

// ReadNote reads what the holder of the lock file at path wrote in it
// (TryLockAs), at most 4 KiB: empty when no holder wrote anything.
func ReadNote(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, maxNote))
}
