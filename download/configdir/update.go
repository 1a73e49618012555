package configdir

import (
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/download/durable"
)

// The session file and the folder list are read, changed and written
// back under a lock of their own (PATH.lock beside them), so that two
// quaks at once (two logins, several backup --init runs from a script)
// never lose each other's change.

// UpdateSessions applies change to the sessions in the file at path and
// writes them back, holding the file's lock throughout. A change that
// returns an error writes nothing.
func UpdateSessions(path string, change func(*Sessions) error) error {
	unlock, err := lockBeside(path)
	if err != nil {
		return err
	}
	defer unlock()
	ss, err := LoadSessions(path)
	if err != nil {
		return err
	}
	if err := change(ss); err != nil {
		return err
	}
	return ss.Save(path)
}

// UpdateFolders applies change to the folder list at path and writes it
// back when change reports a change, holding the list's lock throughout.
func UpdateFolders(path string, change func(*Folders) (bool, error)) error {
	unlock, err := lockBeside(path)
	if err != nil {
		return err
	}
	defer unlock()
	fs, err := LoadFolders(path)
	if err != nil {
		return err
	}
	changed, err := change(fs)
	if err != nil || !changed {
		return err
	}
	return fs.Save(path)
}

// lockBeside takes the lock of the file at path, making its private
// folder first.
func lockBeside(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return durable.Lock(path + ".lock")
}
