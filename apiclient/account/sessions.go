package account

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/quak-photos/quak/errs"
)

// sessionsVersion is the format of a session file holding several
// sessions. A file with one session keeps format fileVersion, so that a
// single account reads exactly as before.
const sessionsVersion = 2

// Sessions is every session kept in one file, at most one per account
// (email) and server.
type Sessions struct {
	List []Account
}

type sessionsFile struct {
	Version  int       `json:"version"`
	Sessions []Account `json:"sessions"`
}

// AmbiguousError reports an email logged in on several servers.
type AmbiguousError struct {
	Email     string
	Endpoints []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s is logged in on several servers (%s)", e.Email, strings.Join(e.Endpoints, ", "))
}

// LoadSessions reads the session file at path in either format. A missing
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
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", path, err)
	}
	switch v.Version {
	case fileVersion:
		a, err := Load(path)
		if err != nil {
			return nil, err
		}
		return &Sessions{List: []Account{*a}}, nil
	case sessionsVersion:
	default:
		return nil, fmt.Errorf("%s has format version %d, this quak reads %d and %d", path, v.Version, fileVersion, sessionsVersion)
	}
	var f sessionsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s is damaged: %w", path, err)
	}
	for _, a := range f.Sessions {
		if a.Token == "" || len(a.MasterKey) != 32 || len(a.SecretKey) != 32 {
			return nil, fmt.Errorf("%s is incomplete (%s): log in again", path, a.Email)
		}
	}
	return &Sessions{List: f.Sessions}, nil
}

// Save writes the sessions to path atomically with mode 0600: one session
// in the single-session format, several in the multi-session one, none by
// deleting the file.
func (s *Sessions) Save(path string) error {
	switch len(s.List) {
	case 0:
		return Remove(path)
	case 1:
		return Save(path, &s.List[0])
	}
	return writePrivate(path, sessionsFile{Version: sessionsVersion, Sessions: s.List})
}

// SameEmail reports whether two emails name the same account.
func SameEmail(a, b string) bool { return strings.EqualFold(a, b) }

// SameEndpoint reports whether two server addresses name the same server.
func SameEndpoint(a, b string) bool {
	return strings.EqualFold(strings.TrimRight(a, "/"), strings.TrimRight(b, "/"))
}

func (s *Sessions) index(email, endpoint string) int {
	for i, a := range s.List {
		if SameEmail(a.Email, email) && SameEndpoint(a.Endpoint, endpoint) {
			return i
		}
	}
	return -1
}

// Put adds a, replacing the session of the same email and server.
func (s *Sessions) Put(a *Account) {
	if i := s.index(a.Email, a.Endpoint); i >= 0 {
		s.List[i] = *a
		return
	}
	s.List = append(s.List, *a)
}

// Delete drops the session of email on endpoint and reports whether there
// was one.
func (s *Sessions) Delete(email, endpoint string) bool {
	i := s.index(email, endpoint)
	if i < 0 {
		return false
	}
	s.List = append(s.List[:i], s.List[i+1:]...)
	return true
}

// Find returns the session of email (case-insensitive) on endpoint, or on
// any server when endpoint is "". Errors: errs.ErrNotLoggedIn when there is
// none, *AmbiguousError when endpoint is "" and email is logged in on
// several servers.
func (s *Sessions) Find(email, endpoint string) (*Account, error) {
	var found []int
	for i, a := range s.List {
		if SameEmail(a.Email, email) && (endpoint == "" || SameEndpoint(a.Endpoint, endpoint)) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		where := ""
		if endpoint != "" {
			where = " on " + endpoint
		}
		return nil, fmt.Errorf("%w (no session for %s%s)", errs.ErrNotLoggedIn, email, where)
	case 1:
		a := s.List[found[0]]
		return &a, nil
	}
	e := &AmbiguousError{Email: email}
	for _, i := range found {
		e.Endpoints = append(e.Endpoints, s.List[i].Endpoint)
	}
	return nil, e
}
