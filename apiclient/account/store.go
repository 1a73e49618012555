package account

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/errs"
)

// fileVersion is the session file's format version.
const fileVersion = 1

// InsecureFileError reports a session file that others could read.
type InsecureFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *InsecureFileError) Error() string {
	return fmt.Sprintf("%s is readable by others (mode %04o); it holds your keys: run `chmod 600 %s`",
		e.Path, e.Mode.Perm(), e.Path)
}

type file struct {
	Version int `json:"version"`
	Account
}

// Save writes the session to path atomically with mode 0600, creating its
// folder with mode 0700.
func Save(path string, a *Account) error {
	return writePrivate(path, file{Version: fileVersion, Account: *a})
}

// writePrivate writes v as indented JSON to path atomically with mode
// 0600, creating its folder with mode 0700.
func writePrivate(path string, v any) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".session-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(append(b, '\n')); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// Load reads the session at path. A missing file is errs.ErrNotLoggedIn;
// a file that group or others can read is *InsecureFileError and is not
// read at all.
func Load(path string) (*Account, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no session at %s)", errs.ErrNotLoggedIn, path)
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &InsecureFileError{Path: path, Mode: fi.Mode()}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", path, err)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("%s has format version %d, this quak reads %d", path, f.Version, fileVersion)
	}
	if f.Token == "" || len(f.MasterKey) != 32 || len(f.SecretKey) != 32 {
		return nil, fmt.Errorf("%s is incomplete: log in again", path)
	}
	return &f.Account, nil
}

// Remove deletes the session file; a missing one is not an error.
func Remove(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
