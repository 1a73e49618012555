package cmd

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/span"
)

func newPruneTrashCmd(d deps) *cobra.Command {
	var olderThan span.Span
	var dry bool
	c := &cobra.Command{
		Use:   "prune-trash DIR",
		Short: "Delete what backup --prune moved to DIR's trash long enough ago",
		Long: `quak backup --prune never deletes: it moves what the server deleted to
DIR/.quak/trash/<date>/, keeping the paths. prune-trash deletes the days of
that trash older than --older-than (default 30d), for good. --dry-run lists
every file it would delete and deletes nothing.

Lengths of time: a whole number and a unit, s, min, h, d, w, mo (months) or
y (years): 30d, 2w, 6mo. A bare m is refused (minutes or months?).

` + exitHelp(map[int]string{
			exitOK: "done", exitLocked: "a backup is running in DIR", exitUnusableDir: "DIR holds no quak backup",
			exitFatal: "", exitUsage: "",
		}),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{fmt.Errorf("prune-trash takes one folder, got %d arguments", len(args))}
			}
			return folderNamed(args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			now := time.Now
			if d.now != nil {
				now = d.now
			}
			cutoff := olderThan.Before(now())
			if !cutoff.Before(now()) {
				return &usageError{fmt.Errorf("--older-than wants a length of time such as 30d, 2w or 6mo")}
			}
			days, err := backup.EmptyTrash(args[0], cutoff, dry)
			verb := "Deleted"
			if dry {
				verb = "Would delete"
			}
			for _, day := range days {
				sayf(d.stdout, "%s the trash of %s (%s, %s).\n", verb, day.Name, plural(len(day.Files), "file"), humanBytes(day.Bytes))
				if dry {
					for _, f := range day.Files {
						sayf(d.stdout, "  %s\n", filepath.Join(day.Name, f))
					}
				}
			}
			if len(days) == 0 && err == nil {
				fmt.Fprintln(d.stdout, "Nothing in the trash is that old.")
			}
			return err
		},
	}
	spanVar(c.Flags(), &olderThan, "older-than", span.Of(30*24*time.Hour), "delete trash days older than this (30d, 2w, 6mo)")
	c.Flags().BoolVar(&dry, "dry-run", false, "list what would be deleted, and delete nothing")
	return c
}
