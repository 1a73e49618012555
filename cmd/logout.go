package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/errs"
)

func newLogoutCmd(d deps) *cobra.Command {
	var n netFlags
	var email, endpoint string
	c := &cobra.Command{
		Use:   "logout",
		Short: "End the session on the server and delete it here",
		Long: `End the session on Ente's server and delete the session file. When the server
cannot be reached the file is still deleted, and the session stays valid on
the server until it is ended from another device. With several accounts
logged in, --account says which one to end; the others stay, and so does the
list of that account's backup folders (quak accounts --forget DIR drops one).

Exit codes: 0 logged out (or no session), 1 the server could not be told.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runLogout(c.Context(), d, &n, email, endpoint) },
	}
	c.Flags().StringVar(&email, "account", "", "the account (email) to log out, when several are logged in")
	c.Flags().StringVar(&endpoint, "endpoint", "", "with --account: its server, when it is logged in on several")
	n.register(c.Flags())
	return c
}

func runLogout(ctx context.Context, d deps, n *netFlags, email, endpoint string) error {
	path, err := sessionPath(d.getenv)
	if err != nil {
		return err
	}
	a, c, err := loadSessionOf(d, n, email, endpoint)
	if errors.Is(err, errs.ErrNotLoggedIn) {
		who := ""
		if email != "" { // --endpoint counts only with --account
			who = " as " + shown(email) + orEmpty(" on ", shown(endpoint))
		}
		fmt.Fprintln(d.stdout, "Not logged in"+who+".")
		return nil
	}
	if err != nil {
		return err
	}
	serverErr := c.Logout(ctx)
	if errors.Is(serverErr, errs.ErrNotLoggedIn) {
		serverErr = nil // the server had ended it already
	}
	if err := removeSession(path, a); err != nil {
		return err
	}
	if serverErr != nil {
		return fmt.Errorf("deleted %s, but could not end the session on the server: %w", path, serverErr)
	}
	sayf(d.stdout, "Logged out %s on %s.\n", a.Email, a.Endpoint) // the same email can be logged in on two servers
	noteFolders(d, a)
	return nil
}
