package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/compare"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/retry"
)

// serverLibrary is what status --server lists: the public link dir
// follows, else the account's library. It never asks for a password: a
// link whose password token lapsed needs a backup at a terminal first.
func serverLibrary(ctx context.Context, d deps, o *statusOpts, dir string) (compare.Library, error) {
	if folder.At(dir).HasLink() {
		d.readPassword = nil
		l, err := openLink(ctx, d, &backupOpts{net: o.net, attempts: retry.Default().MaxAttempts}, dir)
		if err != nil {
			return nil, err
		}
		return l.lib, nil
	}
	a, c, err := loadSessionFor(d, &o.net, dir, o.multi.account)
	if err != nil {
		return nil, err
	}
	return &backup.AccountLibrary{Client: c,
		Keys: catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey}}, nil
}

// compareWithServer lists what the server holds and compares it with the
// backup, adding to h's problems what the backup lacks. A comparison that
// could not be made is an error of its own (a backup writing the state:
// 4; the server out of reach: 75).
func compareWithServer(ctx context.Context, d deps, o *statusOpts, dir string, h *folder.Health) (*compare.Report, error) {
	lib, err := serverLibrary(ctx, d, o, dir)
	if err != nil {
		return nil, fmt.Errorf("comparing with the server: %w", err)
	}
	r, err := compare.Run(ctx, compare.Options{Dir: dir, Library: lib, Policy: retryPolicy(d, retry.Default().MaxAttempts)})
	switch {
	case errors.Is(err, folder.ErrLocked):
		return nil, fmt.Errorf("comparing with the server: a backup is writing the folder's state; run quak status --server when it ends: %w", err)
	case retry.Unreachable(err) && ctx.Err() == nil:
		return nil, &backup.UnreachableError{InARow: 1, Err: err}
	case err != nil:
		return nil, fmt.Errorf("comparing with the server: %w", err)
	}
	if n := r.Lacking(); n > 0 {
		h.Problems = append(h.Problems, folder.Problem{Kind: folder.Failing,
			Msg: fmt.Sprintf("the backup lacks %s of the %s the server holds", counted(n), plural(r.ServerFiles, "file"))})
	}
	return r, nil
}

// writeServer prints how the backup compares with the server: the totals,
// each album, then the files on one side only (20 of each at most).
func writeServer(w io.Writer, r *compare.Report) {
	missing := len(r.Missing)
	sayf(w, "On the server: %s; the backup has %s of them\n", plural(r.ServerFiles, "file"), counted(r.BackupFiles))
	for _, a := range r.Albums {
		line := fmt.Sprintf("  %s: %s of %s", a.Name, counted(a.Backup), counted(a.Server))
		if a.OnlyHere > 0 {
			line += fmt.Sprintf(", and %d only here", a.OnlyHere)
		}
		sayf(w, "%s\n", line)
	}
	if missing > 0 {
		sayf(w, "Missing here:  %s the server lists that the backup lacks\n", plural(missing, "album entry", "album entries"))
		writeFiles(w, r.Missing, true)
	}
	if n := len(r.OnlyHere); n > 0 {
		sayf(w, "Only here:     %s the server no longer lists (the next run marks them deleted on the server; kept)\n",
			plural(n, "album entry", "album entries"))
		writeFiles(w, r.OnlyHere, false)
	}
}

func writeFiles(w io.Writer, files []compare.File, why bool) {
	for i, f := range files {
		if i == 20 {
			sayf(w, "  … and %d more (quak status --server --json lists them)\n", len(files)-i)
			return
		}
		line := shownf("  file %d, %s / %s", f.ID, f.Album, orUnknown(f.Title))
		if why {
			line += ": " + f.Why
		}
		fmt.Fprintln(w, line)
	}
}

// serverJSON is the comparison as status --json gives it.
func serverJSON(r *compare.Report) map[string]any {
	albums := make([]map[string]any, 0, len(r.Albums))
	for _, a := range r.Albums {
		albums = append(albums, map[string]any{"collectionID": a.ID, "album": a.Name, "server": a.Server, "backup": a.Backup, "onlyHere": a.OnlyHere})
	}
	files := func(fs []compare.File) []map[string]any {
		out := make([]map[string]any, 0, len(fs))
		for _, f := range fs {
			m := map[string]any{"fileID": f.ID, "album": f.Album, "title": f.Title}
			if f.Why != "" {
				m["why"] = f.Why
			}
			out = append(out, m)
		}
		return out
	}
	return map[string]any{"files": r.ServerFiles, "backedUp": r.BackupFiles, "lacking": r.Lacking(), "albums": albums,
		"missing": files(r.Missing), "onlyHere": files(r.OnlyHere)}
}
