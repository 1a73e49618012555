package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/errs"
)

func newLogoutCmd(d deps) *cobra.Command {
	var n netFlags
	c := &cobra.Command{
		Use:   "logout",
		Short: "End the session on the server and delete it here",
		Long: `End the session on Ente's server and delete the session file. When the server
cannot be reached the file is still deleted, and the session stays valid on
the server until it is ended from another device.

Exit codes: 0 logged out (or no session), 1 the server could not be told.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runLogout(c.Context(), d, &n) },
	}
	n.register(c.Flags())
	return c
}

func runLogout(ctx context.Context, d deps, n *netFlags) error {
	path, err := sessionPath(d.getenv)
	if err != nil {
		return err
	}
	a, c, err := loadSession(d, n)
	if errors.Is(err, errs.ErrNotLoggedIn) {
		fmt.Fprintln(d.stdout, "Not logged in.")
		return nil
	}
	if err != nil {
		return err
	}
	serverErr := c.Logout(ctx)
	if errors.Is(serverErr, errs.ErrNotLoggedIn) {
		serverErr = nil // the server had ended it already
	}
	if err := account.Remove(path); err != nil {
		return err
	}
	if serverErr != nil {
		return fmt.Errorf("deleted %s, but could not end the session on the server: %w", path, serverErr)
	}
	fmt.Fprintf(d.stdout, "Logged out %s.\n", a.Email)
	return nil
}
