package cmd

import (
	"github.com/spf13/cobra"
)

// newHelperCmd is the group of one-off repair tools.
func newHelperCmd(d deps) *cobra.Command {
	c := &cobra.Command{
		Use:   "helper",
		Short: "Tools that repair an Ente account",
		Long: `Tools that repair what Ente's server has lost. Unlike backup, these change
the account; each says what it will change, and --dry-run shows it first.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newFixThumbnailsCmd(d))
	return c
}
