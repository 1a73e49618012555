package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/retry"
)

type backupOpts struct {
	net         netFlags
	concurrency int
	attempts    int
}

func newBackupCmd(d deps) *cobra.Command {
	o := &backupOpts{}
	c := &cobra.Command{
		Use:   "backup DIR",
		Short: "Bring DIR up to date with everything the account can see",
		Long: `Back up every album the account can see (owned, shared with you, hidden,
archived) into DIR, which must exist. Each new file is downloaded once,
decrypted and checked against Ente's hash while it streams, and only then
given its name: DIR/<album>/<title>, with a sidecar in DIR/<album>/.meta/.
A file in several albums is downloaded once and hard-linked into the others.
Edits to captions, dates or locations rewrite the sidecar without a download.
Files deleted on the server are reported and kept. An existing ` + "`ente export`" + `
folder is recognised: its files are checked, not downloaded again.

Run it by hand or from cron; it is safe to interrupt at any moment (the next
run resumes), and a second run on the same DIR waits for nothing: it exits 4.

Exit codes:
  0  everything saved
  2  some files failed (named on stderr; retried first on the next run)
  3  not logged in, or the session was rejected: run quak login
  4  another quak run holds DIR's lock
  5  DIR is unusable: missing, not writable, or the backup of another account
  1  any other fatal error
  130/143  interrupted by Ctrl-C / SIGTERM`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{fmt.Errorf("backup takes one folder, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runBackup(c.Context(), d, o, args[0]) },
	}
	f := c.Flags()
	f.IntVar(&o.concurrency, "concurrency", 4, "files to download at once")
	f.IntVar(&o.attempts, "attempts", retry.Default().MaxAttempts, "attempts per file and request before giving up until the next run")
	o.net.register(f)
	return c
}

func runBackup(ctx context.Context, d deps, o *backupOpts, dir string) error {
	if o.concurrency < 1 || o.attempts < 1 {
		return &usageError{fmt.Errorf("--concurrency and --attempts must be at least 1")}
	}
	a, c, err := loadSession(d, &o.net)
	if err != nil {
		return err
	}
	p := retry.Default()
	p.MaxAttempts = o.attempts
	if d.sleep != nil {
		p.Sleep = d.sleep
	}
	pr := newPrinter(d)
	sum, err := backup.Run(ctx, backup.Options{
		Dir:         dir,
		Client:      c,
		Keys:        catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey},
		Email:       a.Email,
		Endpoint:    a.Endpoint,
		Policy:      p,
		Concurrency: o.concurrency,
		Events:      pr.event,
		FileMode:    0o666 &^ d.umask,
	})
	pr.finish(sum)
	if err != nil {
		return err
	}
	if n := sum.Failed + sum.AlbumsFailed; n > 0 {
		return &partialError{files: sum.Failed, albums: sum.AlbumsFailed}
	}
	return nil
}

// partialError is a run that saved what it could but not everything.
type partialError struct{ files, albums int }

func (e *partialError) Error() string {
	return fmt.Sprintf("%d files and %d albums could not be backed up; the next run retries them first", e.files, e.albums)
}
