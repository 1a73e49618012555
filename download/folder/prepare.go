package folder

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/state"
)

// Use is how a run uses its backup folder.
type Use struct {
	Init        bool // create DIR when it is missing
	DryRun      bool // only look: make nothing
	AllowNested bool // let a first backup go inside or above another
}

// Prepare checks that dir exists (creating it with u.Init), is a folder,
// is writable and, for a first backup, is neither inside another backup
// nor above one (unless u.AllowNested); then makes its state folder. A dry
// run only looks. Errors: *DirError, *NestedError; nothing is made in a
// folder refused.
func Prepare(dir string, u Use) (*Folder, error) {
	f := At(dir)
	if !u.Init {
		if err := f.isFolder(); err != nil {
			return nil, err
		}
	}
	if !u.AllowNested {
		if err := f.CheckNested(); err != nil {
			return nil, err
		}
	}
	if u.Init {
		if err := os.MkdirAll(f.Dir, 0o755); err != nil {
			return nil, f.error("cannot be created", err)
		}
		if err := f.isFolder(); err != nil {
			return nil, err
		}
	}
	if err := f.CheckLinks(); err != nil {
		return nil, err
	}
	if u.DryRun {
		return f, nil
	}
	if err := os.MkdirAll(f.Temp(), 0o700); err != nil {
		return nil, f.error("is not writable", err)
	}
	probe, err := os.CreateTemp(f.Dir, durable.TempPrefix+"probe-*")
	if err != nil {
		return nil, f.error("is not writable", err)
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name())
	return f, nil
}

// CheckRestorable checks a folder a restore reads: it exists, is a
// folder, and quak's own folders in it are not links elsewhere.
func (f *Folder) CheckRestorable() error {
	if err := f.isFolder(); err != nil {
		return err
	}
	return f.CheckLinks()
}

// isFolder checks that DIR exists and is a folder.
func (f *Folder) isFolder() error {
	fi, err := os.Stat(f.Dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &DirError{Dir: f.Shown, Reason: "does not exist", Kind: DirMissing}
	case err != nil:
		return f.error("cannot be read", err)
	case !fi.IsDir():
		return f.error("is not a folder", nil)
	}
	return nil
}

func (f *Folder) error(reason string, err error) *DirError {
	return &DirError{Dir: f.Shown, Reason: reason, Err: err}
}

// CheckLinks refuses a backup folder whose state folder, temp area or
// trash (which quak writes, sweeps and empties) is a symbolic link or not
// a folder: quak never follows a link out of the backup folder.
func (f *Folder) CheckLinks() error {
	for _, rel := range []string{StateDir, filepath.Join(StateDir, tempDir), filepath.Join(StateDir, trashDir), filepath.Join(StateDir, restoreDir)} {
		fi, err := os.Lstat(filepath.Join(f.Dir, rel))
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			return &DirError{Dir: f.Shown, Reason: fmt.Sprintf("has %s as a symbolic link, which quak never follows", rel), Kind: DirLink}
		case !fi.IsDir():
			return f.error(fmt.Sprintf("has %s, which is not a folder", rel), nil)
		}
	}
	return nil
}

// CopyState opens a private copy of the state for a dry run (a new empty
// one for a folder never backed up) and a func that removes it. Errors:
// ErrLocked while a run writes the state.
func (f *Folder) CopyState() (st *state.Store, drop func(), err error) {
	tmp, err := os.CreateTemp("", "quak-dry-run-*.db")
	if err != nil {
		return nil, nil, err
	}
	path := tmp.Name()
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(path)
		}
	}()
	orig, err := f.OpenStateReadOnly() // a shared lock: no backup is writing it
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, nil, err
	default:
		err = copyInto(tmp, f.path(stateFile))
		_ = orig.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	if err = tmp.Close(); err != nil {
		return nil, nil, err
	}
	if st, err = state.Open(path); err != nil {
		return nil, nil, err
	}
	return st, func() { _ = st.Close(); _ = os.Remove(path) }, nil
}

func copyInto(dst *os.File, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	_, err = io.Copy(dst, in)
	return err
}

// CheckState reports a state database that cannot be read or is not a
// database. It reads the file's first page instead of opening it, so a
// run starting this moment never finds the database in use.
func (f *Folder) CheckState() error {
	fh, err := os.Open(f.path(stateFile))
	if err != nil {
		return err
	}
	defer func() { _ = fh.Close() }()
	if !state.LooksValid(fh) {
		return errors.New("it is not a quak state database (damaged?)")
	}
	return nil
}
