package cmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/configdir"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

// foldersPath is the list of backup folders and their accounts, beside the
// session file.
func foldersPath(getenv func(string) string) (string, error) {
	d, err := configDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "folders.json"), nil
}

// loadSessions reads every session in the config folder.
func loadSessions(d deps) (*configdir.Sessions, string, error) {
	path, err := sessionPath(d.getenv)
	if err != nil {
		return nil, "", err
	}
	s, err := configdir.LoadSessions(path)
	return s, path, err
}

// loadFolders reads the folder list in the config folder.
func loadFolders(d deps) (*configdir.Folders, string, error) {
	path, err := foldersPath(d.getenv)
	if err != nil {
		return nil, "", err
	}
	f, err := configdir.LoadFolders(path)
	return f, path, err
}

// errSeveralAccounts asks for --account when nothing else says which
// session a command should use.
var errSeveralAccounts = errors.New("several accounts are logged in, and nothing says which one to use")

// loadSessionFor returns the session a command on the backup folder dir
// ("" for none) should use, with a client of its server. The account is, in
// this order: email (--account) when given; the account dir was registered
// to; the account recorded in dir's backup; the only session there is.
// Errors: errs.ErrNotLoggedIn when that account has no session, a
// *usageError when several accounts could be meant.
func loadSessionFor(d deps, n *netFlags, dir, email string) (*account.Account, *apiclient.Client, error) {
	a, err := pickSession(d, dir, email)
	if err != nil {
		return nil, nil, err
	}
	c, err := n.client(d, a.Endpoint)
	if err != nil {
		return nil, nil, err
	}
	return a, c.WithToken(a.Token), nil
}

func pickSession(d deps, dir, email string) (*account.Account, error) {
	ss, path, err := loadSessions(d)
	if err != nil {
		return nil, err
	}
	var reg *configdir.Folder
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
		fs, _, err := loadFolders(d)
		if err != nil {
			return nil, err
		}
		reg = fs.Get(dir)
	}
	switch {
	case email != "":
		endpoint := ""
		if reg != nil && account.SameEmail(reg.Email, email) {
			endpoint = reg.Endpoint
		}
		a, err := found(ss.Find(email, endpoint))
		return a, loginNeeded(err, email, endpoint)
	case reg != nil && reg.Email != "":
		a, err := ss.Find(reg.Email, reg.Endpoint)
		if err != nil {
			return nil, loginNeeded(fmt.Errorf("%s belongs to %s on %s: %w", dir, reg.Email, reg.Endpoint, err), reg.Email, reg.Endpoint)
		}
		return a, nil
	}
	if dir != "" && len(ss.List) != 1 {
		owner, err := folderOwner(dir)
		if err != nil && len(ss.List) > 1 {
			return nil, err
		}
		if owner != nil && owner.Email != "" {
			a, err := ss.Find(owner.Email, owner.Endpoint)
			if err != nil {
				return nil, loginNeeded(fmt.Errorf("%s is the backup of %s on %s: %w", dir, owner.Email, owner.Endpoint, err), owner.Email, owner.Endpoint)
			}
			return a, nil
		}
	}
	switch len(ss.List) {
	case 0:
		return nil, fmt.Errorf("%w (no session at %s)", errs.ErrNotLoggedIn, path)
	case 1:
		// One session: as before several existed, the backup itself
		// refuses a folder of another account.
		return &ss.List[0], nil
	}
	return nil, &usageError{errSeveralAccounts}
}

// loginError is a session missing, or refused by its server, for an
// account quak knows: the hint names it and its server.
type loginError struct {
	email, endpoint string
	err             error
}

func (e *loginError) Error() string { return e.err.Error() }
func (e *loginError) Unwrap() error { return e.err }

// hint is the login that would do.
func (e *loginError) hint() string {
	return "run `quak login --email " + e.email + orEmpty(" --endpoint ", e.endpoint) + "`"
}

// loginNeeded is err, naming email's account on endpoint ("": any
// server) when err says it needs a login.
func loginNeeded(err error, email, endpoint string) error {
	if !errors.Is(err, errs.ErrNotLoggedIn) {
		return err
	}
	return &loginError{email: email, endpoint: endpoint, err: err}
}

// found turns an ambiguous --account into a usage error.
func found(a *account.Account, err error) (*account.Account, error) {
	var ae *configdir.AmbiguousError
	if errors.As(err, &ae) {
		return nil, &usageError{err}
	}
	return a, err
}

// registerFolder records that dir belongs to a's account, for --all and for
// runs without --account.
func registerFolder(d deps, dir string, a *account.Account) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	path, err := foldersPath(d.getenv)
	if err != nil {
		return err
	}
	return configdir.UpdateFolders(path, func(fs *configdir.Folders) (bool, error) {
		return fs.Set(abs, a.Email, a.Endpoint), nil
	})
}

// addSession adds a to the session file at path, replacing its earlier
// session, and returns how many sessions the file now holds.
func addSession(path string, a *account.Account) (n int, err error) {
	err = configdir.UpdateSessions(path, func(ss *configdir.Sessions) error {
		ss.Put(a)
		n = len(ss.List)
		return nil
	})
	return n, err
}

// loadSessionOf returns the session of email on endpoint ("" for any
// server), or the only session when email is "".
func loadSessionOf(d deps, n *netFlags, email, endpoint string) (*account.Account, *apiclient.Client, error) {
	if email == "" {
		return loadSession(d, n)
	}
	ss, _, err := loadSessions(d)
	if err != nil {
		return nil, nil, err
	}
	a, err := found(ss.Find(email, endpoint))
	if err != nil {
		return nil, nil, err
	}
	c, err := n.client(d, a.Endpoint)
	if err != nil {
		return nil, nil, err
	}
	return a, c.WithToken(a.Token), nil
}

// removeSession deletes a's session from the file at path, and the file
// with the last one.
func removeSession(path string, a *account.Account) error {
	return configdir.UpdateSessions(path, func(ss *configdir.Sessions) error {
		ss.Delete(a.Email, a.Endpoint)
		return nil
	})
}

// orEmpty is prefix+s, or "" when s is "".
func orEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// folderOwner is the account dir's backup belongs to, or nil for a folder
// with no backup: from its last run's record, readable while a backup
// runs, else from its state.
func folderOwner(dir string) (*state.Account, error) {
	f := folder.At(dir)
	r, err := f.LastRun()
	if err == nil && r.Email != "" {
		return &state.Account{UserID: r.UserID, Email: r.Email, Endpoint: r.Endpoint}, nil
	}
	return f.Owner()
}

// noteFolders tells, after a logout, which backup folders stay recorded for
// a's account.
func noteFolders(d deps, a *account.Account) {
	fs, _, err := loadFolders(d)
	if err != nil {
		return
	}
	for _, f := range fs.Of(a.Email, a.Endpoint) {
		sayf(d.stdout, "%s stays recorded as its backup: --all reports it as not logged in until you log in again or run quak accounts --forget %s\n", f.Dir, f.Dir)
	}
}
