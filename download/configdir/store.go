package configdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/durable"
)

// The session file has two formats: fileVersion holds one session at its
// top level, which every quak reads; sessionsVersion a list of them.
const (
	fileVersion     = 1
	sessionsVersion = 2
)

// InsecureFileError reports a file holding a secret (the session's keys, a
// password, a health-check URL) that others could read: it is not read.
type InsecureFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *InsecureFileError) Error() string {
	return fmt.Sprintf("%s is readable by others (mode %04o)", e.Path, e.Mode.Perm())
}

// sessionFile is the session file in either format.
type sessionFile struct {
	Version          int               `json:"version"`
	Sessions         []account.Account `json:"sessions,omitempty"`
	*account.Account                   // fileVersion: the one session
}

// LoadSessions reads the session file at path, in either format. A missing
// file is no session and no error; a file that group or others can read is
// *InsecureFileError and is not read at all.
func LoadSessions(path string) (*Sessions, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Sessions{}, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &InsecureFileError{Path: path, Mode: fi.Mode()}
	}
	var f sessionFile
	if err := readVersioned(path, &f, func() int { return f.Version }, fileVersion, sessionsVersion); err != nil {
		return nil, err
	}
	list := f.Sessions
	if f.Version == fileVersion {
		list = []account.Account{{}}
		if f.Account != nil {
			list[0] = *f.Account
		}
	}
	for _, a := range list {
		if a.Token == "" || len(a.MasterKey) != 32 || len(a.SecretKey) != 32 {
			return nil, fmt.Errorf("%s is incomplete (%s): log in again", path, a.Email)
		}
	}
	return &Sessions{List: list}, nil
}

// Save writes the sessions to path atomically with mode 0600, creating its
// folder with mode 0700: one session in the single-session format, several
// in the list, none by deleting the file.
func (s *Sessions) Save(path string) error {
	switch len(s.List) {
	case 0:
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	case 1:
		return writePrivate(path, sessionFile{Version: fileVersion, Account: &s.List[0]})
	}
	return writePrivate(path, sessionFile{Version: sessionsVersion, Sessions: s.List})
}

// writePrivate writes v as indented JSON to path atomically with mode
// 0600, creating its folder with mode 0700.
func writePrivate(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFileSynced("", path, append(b, '\n'), 0o600)
}

// readVersioned reads the JSON file at path into v and checks that the
// version it holds (read by version) is one of known.
func readVersioned(path string, v any, version func() int, known ...int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s is damaged: %w", path, err)
	}
	for _, k := range known {
		if version() == k {
			return nil
		}
	}
	want := fmt.Sprint(known[0])
	for _, k := range known[1:] {
		want += fmt.Sprintf(" and %d", k)
	}
	return fmt.Errorf("%s has format version %d, this quak reads %s", path, version(), want)
}
