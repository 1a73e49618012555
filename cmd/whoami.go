package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func newWhoamiCmd(d deps) *cobra.Command {
	var n netFlags
	var email string
	c := &cobra.Command{
		Use:   "whoami",
		Short: "Show the account and server, and check the session is valid",
		Long: `Print the logged-in account and its server, then ask the server whether the
session is still valid.

Exit codes: 0 valid, 3 not logged in or the session was rejected, 1 the
server could not be asked.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runWhoami(c.Context(), d, &n, email) },
	}
	c.Flags().StringVar(&email, "account", "", "the account (email) to show, when several are logged in")
	n.register(c.Flags())
	return c
}

func runWhoami(ctx context.Context, d deps, n *netFlags, email string) error {
	a, c, err := loadSessionOf(d, n, email, "")
	if err != nil {
		return err
	}
	sayf(d.stdout, "%s (user %d) on %s\n", a.Email, a.UserID, a.Endpoint)
	if _, err := c.SessionValidity(ctx); err != nil {
		return fmt.Errorf("checking the session: %w", err)
	}
	fmt.Fprintln(d.stdout, "Session is valid.")
	return nil
}
