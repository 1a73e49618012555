package views

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// Options are the views a backup folder keeps, chosen per folder and
// remembered there.
type Options struct {
	// Sidecars is the JSON kept for each file ("" is sidecars.Ente).
	Sidecars sidecars.Style
	// XMP writes NAME.EXT.xmp beside every saved part.
	XMP bool
	// DateView, when set, keeps a second tree of hard links to the saved
	// parts under DIR/DateViewDir, in folders named by this format from
	// each file's creation time in Zone.
	DateView sidecars.DateFormat
	// Zone is the time zone of the date view's folders and of XMP times
	// whose own offset Ente does not know (nil: time.Local). ZoneName is
	// what status calls it.
	Zone     *time.Location
	ZoneName string
}

func (o Options) style() sidecars.Style {
	if o.Sidecars == "" {
		return sidecars.Ente
	}
	return o.Sidecars
}

func (o Options) zone() *time.Location {
	if o.Zone == nil {
		return time.Local
	}
	return o.Zone
}

// DateViewDir is the top-level folder of the date view. No album folder
// takes this name: an album called so gets "By date_1".
const DateViewDir = "By date"

// Disk is every change the views make to the backup folder (the backup's
// own disk: a dry run's notes changes and writes nothing).
type Disk interface {
	// Exists reports whether path exists, as it does after this run's
	// changes; a symbolic link counts as there.
	Exists(path string) bool
	MkdirAll(dir string, mode os.FileMode) error
	// WriteFile writes a small file atomically, making its folder.
	WriteFile(path string, b []byte) error
	// LinkOrCopy makes dst the same file as src: a hard link, or a copy
	// where the file system has none (copied says which).
	LinkOrCopy(src, dst string) (copied bool, err error)
	Rename(from, to string) error
	Remove(path string)
	// Changed notes folders whose entries changed, for the next commit
	// to sync.
	Changed(dirs ...string)
	// RemoveDir removes dir if it is empty, and reports whether it did.
	RemoveDir(dir string) bool
	// SaveViews remembers the folder's views.
	SaveViews(v folder.ViewOptions) error
}

// Note is what the views tell the run: a warning about a file's views
// (Err says what), or an album folder moved out of the date view's way
// (Moved; Path is its new name).
type Note struct {
	Moved        bool
	Album        string
	Title        string
	FileID       int64
	CollectionID int64
	Path         string // relative to the backup folder
	Err          error
}

// Config is what a Keeper uses.
type Config struct {
	Dir     string // DIR, absolute
	DirName string // DIR as the run was given it, which errors name
	Options Options
	UserID  int64 // the account, named in album_meta.json
	Store   *state.Store
	Disk    Disk
	// Albums are the run's albums as it last read or changed them.
	Albums func() map[int64]*state.Collection
	// PartsExist reports whether every part of e is in album c's folder.
	PartsExist func(c *state.Collection, e *state.Entry) bool
	// Taken reports whether name is a saved file's in album cid's folder:
	// a sidecar never replaces one.
	Taken func(cid int64, name string) bool
	// Record syncs the folders written and records files and album.
	Record func(files []*state.File, c *state.Collection) error
	// DiskError turns a full or read-only disk into the error that stops
	// the run, and returns other errors as they are.
	DiskError func(error) error
	Tell      func(Note)
	Now       func() time.Time // dates a new Takeout album file
}

// micros turns Ente's µs timestamps into time.
func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// claim records name, holding b, as a sidecar of quak's in e.
func claim(e *state.Entry, name string, b []byte) {
	e.Sidecars = withName(e.Sidecars, name)
	if e.SidecarHashes == nil {
		e.SidecarHashes = map[string]string{}
	}
	e.SidecarHashes[name] = sidecarHash(b)
}

// sidecarHash is what Entry.SidecarHashes keeps of bytes quak wrote.
func sidecarHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// usersNow reports whether the sidecar name recorded in e, at path p, was
// rewritten by another tool: it is there and no longer holds the bytes
// quak last wrote, or, for a name recorded without their hash (older
// quaks), what quak would write now (body; nil: such a name counts as
// quak's, as it did then).
func usersNow(e *state.Entry, p, name string, body func() []byte) bool {
	want, ok := e.SidecarHashes[name]
	if !ok && body == nil {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	if ok {
		return sidecarHash(b) != want
	}
	return !bytes.Equal(b, body())
}

// disown takes name out of e's sidecars: quak no longer touches it.
func disown(e *state.Entry, name string) {
	e.Sidecars = withoutName(e.Sidecars, name)
	delete(e.SidecarHashes, name)
	if len(e.SidecarHashes) == 0 {
		e.SidecarHashes = nil
	}
}

// sameContent reports whether the file at path holds exactly b.
func sameContent(path string, b []byte) bool {
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, b)
}

// withName returns names with n added (a new slice: records share theirs).
func withName(names []string, n string) []string {
	if slices.Contains(names, n) {
		return names
	}
	return append(slices.Clip(names), n)
}

// withoutName returns names without n (a new slice).
func withoutName(names []string, n string) []string {
	out := make([]string, 0, len(names))
	for _, x := range names {
		if x != n {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// removeIfExists removes a file of quak's making, if it is there.
func removeIfExists(d Disk, path string) bool {
	if !d.Exists(path) {
		return false
	}
	d.Remove(path)
	d.Changed(filepath.Dir(path))
	return true
}

func saved(f *state.File) bool { return f.Status == state.Saved || f.Status == state.HashMismatch }

func isDirError(err error) bool {
	var de *folder.DirError
	return errors.As(err, &de)
}
