package cmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/configdir"
	"github.com/quak-photos/quak/errs"
)

type accountsOpts struct {
	net     netFlags
	offline bool
	json    bool
	forget  string
}

func newAccountsCmd(d deps) *cobra.Command {
	o := &accountsOpts{}
	c := &cobra.Command{
		Use:   "accounts",
		Short: "List the logged-in accounts, their backup folders and sessions",
		Long: `List every account logged in here (quak login adds one), each with its
server, the backup folders recorded for it (every folder quak backup backs
up is recorded; backup, status and verify --all run on them) and
whether the server still accepts its session (one request per account;
--offline skips it). Folders recorded for an account that is no longer
logged in are listed too: --all reports them as not logged in until you log
in again or drop them with --forget DIR (their files stay).

Exit codes:
  0  every session is accepted (or --offline)
  3  a session was rejected, or a recorded folder's account is not logged in
  1  any other fatal error, or a session could not be checked`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runAccounts(c.Context(), d, o) },
	}
	f := c.Flags()
	f.BoolVar(&o.offline, "offline", false, "do not ask the servers whether the sessions are valid")
	f.BoolVar(&o.json, "json", false, "one JSON object per account on stdout")
	f.StringVar(&o.forget, "forget", "", "drop this folder from the list (its files stay); --all then leaves it out")
	o.net.register(f)
	return c
}

// accountLine is one account as quak accounts shows it.
type accountLine struct {
	email, endpoint string
	userID          int64
	session         string
	code            int
	folders         []configdir.Folder
}

func runAccounts(ctx context.Context, d deps, o *accountsOpts) error {
	if o.forget != "" {
		return forgetFolder(d, o.forget)
	}
	ss, _, err := loadSessions(d)
	if err != nil {
		return err
	}
	fs, _, err := loadFolders(d)
	if err != nil {
		return err
	}
	var lines []accountLine
	seen := map[int]bool{}
	for _, a := range ss.List {
		l := accountLine{email: a.Email, endpoint: a.Endpoint, userID: a.UserID, session: "not checked (--offline)",
			folders: fs.Of(a.Email, a.Endpoint)}
		if !o.offline {
			l.session, l.code = askSession(ctx, d, &o.net, &a)
		}
		for i, f := range fs.List {
			if account.SameEmail(f.Email, a.Email) && account.SameEndpoint(f.Endpoint, a.Endpoint) {
				seen[i] = true
			}
		}
		lines = append(lines, l)
	}
	for i, f := range fs.List {
		if seen[i] {
			continue
		}
		if f.Email == "" { // a public link's folder: no account, no session
			lines = append(lines, accountLine{endpoint: f.Endpoint, session: "none needed: a public link's album", folders: []configdir.Folder{f}})
			continue
		}
		lines = append(lines, accountLine{email: f.Email, endpoint: f.Endpoint, session: "none: run quak login --email " + f.Email, code: exitLogin, folders: []configdir.Folder{f}})
	}
	code := exitOK
	for _, l := range lines {
		code = worse(code, l.code)
	}
	if o.json {
		writeAccountsJSON(d, lines)
	} else {
		writeAccounts(d, lines)
	}
	if code != exitOK {
		return &statusError{code: code, msg: "not every account can back up: see the sessions above", inJSON: o.json}
	}
	return nil
}

// askSession asks a's server whether it still accepts a's session.
func askSession(ctx context.Context, d deps, n *netFlags, a *account.Account) (string, int) {
	c, err := n.client(d, a.Endpoint)
	if err != nil {
		return "could not be checked: " + err.Error(), exitFatal
	}
	_, err = c.WithToken(a.Token).SessionValidity(ctx)
	switch {
	case errors.Is(err, errs.ErrNotLoggedIn):
		return "rejected by the server: run quak login --email " + a.Email, exitLogin
	case err != nil:
		return "could not be checked: " + err.Error(), exitFatal
	}
	return "valid", exitOK
}

func writeAccounts(d deps, lines []accountLine) {
	if len(lines) == 0 {
		fmt.Fprintln(d.stdout, "No account is logged in: run quak login.")
		return
	}
	for _, l := range lines {
		user := ""
		if l.userID != 0 {
			user = fmt.Sprintf(" (user %d)", l.userID)
		}
		if l.email == "" {
			sayf(d.stdout, "A public link's album on %s: no account, no session needed\n", l.endpoint)
		} else {
			sayf(d.stdout, "%s%s on %s: session %s\n", l.email, user, l.endpoint, l.session)
		}
		if len(l.folders) == 0 {
			sayf(d.stdout, "  no backup folder recorded (quak backup --init --account %s DIR records one)\n", l.email)
		}
		for _, f := range l.folders {
			sayf(d.stdout, "  %s%s\n", f.Dir, missingNote(f.Dir))
		}
	}
}

func writeAccountsJSON(d deps, lines []accountLine) {
	jl := newJSONLines(d)
	for _, l := range lines {
		folders := make([]map[string]any, 0, len(l.folders))
		for _, f := range l.folders {
			folders = append(folders, map[string]any{"dir": f.Dir, "exists": dirExists(f.Dir)})
		}
		jl.write("account", map[string]any{"account": l.email, "endpoint": l.endpoint, "userID": l.userID,
			"session": l.session, "exitCode": l.code, "folders": folders})
	}
}

// errNotRecorded is a folder quak accounts --forget does not know.
var errNotRecorded = errors.New("not in the folder list")

func missingNote(dir string) string {
	if dirExists(dir) {
		return ""
	}
	return " (missing: is the disk mounted? If it is gone for good, quak accounts --forget it)"
}

// forgetFolder drops dir from the folder list, leaving its files alone.
func forgetFolder(d deps, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	path, err := foldersPath(d.getenv)
	if err != nil {
		return err
	}
	err = configdir.UpdateFolders(path, func(fs *configdir.Folders) (bool, error) {
		if !fs.Forget(abs) {
			return false, &usageError{fmt.Errorf("%s: %w", abs, errNotRecorded)}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	sayf(d.stdout, "Forgot %s; its files stay.\n", abs)
	return nil
}
