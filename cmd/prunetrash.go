package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/filter"
)

func newPruneTrashCmd(d deps) *cobra.Command {
	var olderThan string
	c := &cobra.Command{
		Use:   "prune-trash DIR",
		Short: "Delete what backup --prune moved to DIR's trash long enough ago",
		Long: `quak backup --prune never deletes: it moves what the server deleted to
DIR/.quak/trash/<date>/, keeping the paths. prune-trash deletes the days of
that trash older than --older-than (default 30d), for good.

Exit codes: 0 done, 4 a backup is running in DIR, 5 DIR holds no quak backup.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{fmt.Errorf("prune-trash takes one folder, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			now := time.Now
			if d.now != nil {
				now = d.now
			}
			cutoff, err := filter.ParseTime(olderThan, now())
			if err != nil || !cutoff.Before(now()) {
				return &usageError{fmt.Errorf("--older-than wants an age such as 30d, 2w or 12h")}
			}
			removed, err := backup.EmptyTrash(args[0], cutoff)
			if len(removed) > 0 {
				fmt.Fprintf(d.stdout, "Deleted the trash of %s.\n", strings.Join(removed, ", "))
			} else if err == nil {
				fmt.Fprintln(d.stdout, "Nothing in the trash is that old.")
			}
			return err
		},
	}
	c.Flags().StringVar(&olderThan, "older-than", "30d", "delete trash days older than this age")
	return c
}
