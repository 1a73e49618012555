// Package compare tells how complete a backup is: it lists what the
// server holds now (an account's albums, or a public link's) and compares
// it, album by album, with what the backup folder holds on disk, reading
// the folder's state without writing anything.
package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
)

// Library is what a comparison reads of the server: the albums and each
// one's whole listing (download/backup's AccountLibrary and LinkLibrary
// are ones).
type Library interface {
	Collections(ctx context.Context, since int64) ([]apiclient.Collection, error)
	OpenAlbum(c *apiclient.Collection) (*catalog.Album, error)
	Diff(ctx context.Context, collectionID, since int64) (*apiclient.DiffPage, error)
}

// Options configure a comparison.
type Options struct {
	Dir     string
	Library Library
	Policy  retry.Policy
}

// ListOverlap is how far behind an album's cursor (the server's time up
// to which a run listed it) a file still counts as new: museum stamps an
// upload when it arrives and may commit it seconds later, so a run can
// miss a file stamped before its cursor, and the next run lists that much
// behind it (download/backup's ListOverlap).
const ListOverlap = 10 * time.Minute

// Why a file on the server is not in the backup.
const (
	WhyNew     = "new since the last run" // the next run takes it
	WhyFailing = "failing"                // the last run tried and failed; the next retries it
	WhyLeftOut = "left out by the filters"
	WhyGone    = "missing on disk" // recorded, but its copy is not there
	WhyAbsent  = "not in the backup"
	// WhyNoAlbum: the backup has no folder of the album at all (a run's
	// --albums or other filters left it out, or it failed to list).
	WhyNoAlbum = "its album is not in the backup"
)

// File is a file in one album on one side only.
type File struct {
	ID    int64
	Album string
	Title string // on the server's side; the name in the backup's
	Why   string // for a file missing from the backup
}

// Album is one album's counts.
type Album struct {
	ID     int64
	Name   string
	Server int // files the server lists in it
	Backup int // of those, how many the backup holds in its folder
	// OnlyHere counts the copies the backup holds as live in this album
	// that the server no longer lists in it (the next run marks them).
	OnlyHere int
}

// Report is what a comparison found.
type Report struct {
	Albums []Album // by name
	// ServerFiles are the files the server holds in any album, once each;
	// BackupFiles, how many of them the backup holds a copy of.
	ServerFiles, BackupFiles int
	// Missing are the album entries the backup lacks, by album then
	// title; OnlyHere, the copies only the backup holds.
	Missing  []File
	OnlyHere []File
}

// Lacking counts the files the backup lacks for a reason other than being
// new since its last run: what makes it incomplete.
func (r *Report) Lacking() int {
	n := 0
	seen := map[int64]bool{}
	for _, f := range r.Missing {
		if f.Why != WhyNew && !seen[f.ID] {
			seen[f.ID] = true
			n++
		}
	}
	return n
}

// Run compares the server's listing with the backup in o.Dir. It reads
// the state read-only: folder.ErrLocked while a backup writes it.
// Listing errors come back as they are (an *errs.ApiError, a network
// error), after o.Policy's retries.
func Run(ctx context.Context, o Options) (*Report, error) {
	f := folder.At(o.Dir)
	st, err := f.OpenStateReadOnly()
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	held, err := holdings(f, st)
	if err != nil {
		return nil, err
	}
	albums, err := listAlbums(ctx, o)
	if err != nil {
		return nil, err
	}
	c := &comparison{o: o, held: held, report: &Report{}, onServer: map[int64]bool{}, backedUp: map[int64]bool{}}
	for _, a := range albums {
		if err := c.album(ctx, a); err != nil {
			return nil, err
		}
	}
	c.onlyHere(albums)
	c.report.ServerFiles, c.report.BackupFiles = len(c.onServer), len(c.backedUp)
	c.sort()
	return c.report, nil
}

// copy is what the backup holds of a file in one album.
type copyOf struct {
	name    string
	status  state.Status
	deleted bool // marked deleted on the server by a run
	onDisk  bool
}

// backupView is the backup's side: each album's copies by file id, and
// how far the last runs listed each album (server time, µs).
type backupView struct {
	copies  map[int64]map[int64]*copyOf // album, then file
	status  map[int64]state.Status      // every file recorded, placed or not
	cursors map[int64]int64
	latest  int64 // the furthest cursor: for albums the backup never listed
}

// holdings reads what the backup holds, album by album, and whether each
// copy is on disk.
func holdings(f *folder.Folder, st *state.Store) (*backupView, error) {
	colls, err := st.Collections()
	if err != nil {
		return nil, err
	}
	v := &backupView{copies: map[int64]map[int64]*copyOf{}, status: map[int64]state.Status{}, cursors: map[int64]int64{}}
	for id, c := range colls {
		v.cursors[id] = c.Cursor
		v.latest = max(v.latest, c.Cursor)
	}
	err = st.Briefs(func(b state.Brief) error {
		v.status[b.ID] = b.Status
		for _, p := range b.Places {
			c := &copyOf{name: p.Name, status: b.Status, deleted: p.Deleted}
			if coll := colls[p.CollectionID]; coll != nil {
				c.onDisk = partsOnDisk(f.Dir, coll.Folder, p.Parts)
			}
			if v.copies[p.CollectionID] == nil {
				v.copies[p.CollectionID] = map[int64]*copyOf{}
			}
			v.copies[p.CollectionID][b.ID] = c
		}
		return nil
	})
	return v, err
}

// partsOnDisk reports whether every part of a copy is a file in its
// album folder.
func partsOnDisk(dir, albumFolder string, parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	for _, part := range parts {
		p, err := layout.Join(dir, albumFolder, part)
		if err != nil {
			return false
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// listAlbums lists and opens every live album the server shows.
func listAlbums(ctx context.Context, o Options) ([]*catalog.Album, error) {
	var list []apiclient.Collection
	err := retry.Do(ctx, o.Policy, func(ctx context.Context) error {
		var err error
		list, err = o.Library.Collections(ctx, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing albums: %w", err)
	}
	var out []*catalog.Album
	for i := range list {
		if list[i].IsDeleted {
			continue
		}
		a, err := o.Library.OpenAlbum(&list[i])
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// comparison is one run's working state.
type comparison struct {
	o        Options
	held     *backupView
	report   *Report
	onServer map[int64]bool // every file live on the server
	backedUp map[int64]bool // those the backup holds a copy of on disk
	listed   map[int64]map[int64]bool
}

// album compares one album's listing with its copies in the backup.
func (c *comparison) album(ctx context.Context, a *catalog.Album) error {
	live, err := c.listing(ctx, a)
	if err != nil {
		return fmt.Errorf("listing album %d: %w", a.ID, err)
	}
	if c.listed == nil {
		c.listed = map[int64]map[int64]bool{}
	}
	c.listed[a.ID] = map[int64]bool{}
	ac := Album{ID: a.ID, Name: a.Name, Server: len(live)}
	copies := c.held.copies[a.ID]
	for _, f := range live {
		c.listed[a.ID][f.ID] = true
		c.onServer[f.ID] = true
		cp := copies[f.ID]
		if cp != nil && cp.onDisk && (cp.status == state.Saved || cp.status == state.HashMismatch) {
			ac.Backup++
			c.backedUp[f.ID] = true
			continue
		}
		why := c.why(cp, f, a.ID)
		if _, known := c.held.cursors[a.ID]; why == WhyAbsent && !known {
			why = WhyNoAlbum
		}
		c.report.Missing = append(c.report.Missing, File{ID: f.ID, Album: a.Name, Title: title(f, a), Why: why})
	}
	c.report.Albums = append(c.report.Albums, ac)
	return nil
}

// why a file the server lists in album is not in the backup there.
func (c *comparison) why(cp *copyOf, f *apiclient.File, album int64) string {
	cursor, listed := c.held.cursors[album]
	if !listed {
		cursor = c.held.latest
	}
	switch status := c.held.status[f.ID]; {
	case status == state.Failed:
		return WhyFailing
	case status == state.Skipped:
		return WhyLeftOut
	case cp != nil && !cp.onDisk && !cp.deleted:
		return WhyGone
	case f.UpdationTime > cursor-ListOverlap.Microseconds():
		return WhyNew
	}
	return WhyAbsent
}

// title is a file's title, or "" when its metadata does not open.
func title(f *apiclient.File, a *catalog.Album) string {
	it, err := catalog.OpenItem(f, a)
	if err != nil {
		return ""
	}
	return it.Meta.Title
}

// maxPages bounds one album's listing, as a backup's is bounded.
const maxPages = 20_000

// errBroken reports a listing that does not go on or does not end.
var errBroken = errors.New("the server's listing of the album does not go on or does not end")

// listing is an album's live files: each file's latest entry, when it is
// not a deletion.
func (c *comparison) listing(ctx context.Context, a *catalog.Album) ([]*apiclient.File, error) {
	latest := map[int64]*apiclient.File{}
	var since int64
	for range maxPages {
		var page *apiclient.DiffPage
		next := func(ctx context.Context) (err error) { page, err = c.o.Library.Diff(ctx, a.ID, since); return err }
		if err := retry.Do(ctx, c.o.Policy, next); err != nil {
			return nil, err
		}
		for i := range page.Diff {
			f := &page.Diff[i]
			if old := latest[f.ID]; old == nil || f.UpdationTime >= old.UpdationTime {
				latest[f.ID] = f
			}
		}
		cursor := apiclient.DiffCursor(since, page.Diff)
		if !page.HasMore {
			var live []*apiclient.File
			for _, f := range latest {
				if !f.IsDeleted {
					live = append(live, f)
				}
			}
			return live, nil
		}
		if cursor <= since {
			return nil, errBroken
		}
		since = cursor
	}
	return nil, errBroken
}

// onlyHere counts the copies the backup holds as live that the server no
// longer lists, in the albums it listed.
func (c *comparison) onlyHere(albums []*catalog.Album) {
	for i, a := range albums {
		for id, cp := range c.held.copies[a.ID] {
			if c.listed[a.ID][id] || cp.deleted || !cp.onDisk {
				continue
			}
			c.report.Albums[i].OnlyHere++
			c.report.OnlyHere = append(c.report.OnlyHere, File{ID: id, Album: a.Name, Title: cp.name})
		}
	}
}

func (c *comparison) sort() {
	r := c.report
	sort.Slice(r.Albums, func(i, j int) bool {
		if r.Albums[i].Name != r.Albums[j].Name {
			return r.Albums[i].Name < r.Albums[j].Name
		}
		return r.Albums[i].ID < r.Albums[j].ID
	})
	for _, fs := range [][]File{r.Missing, r.OnlyHere} {
		sort.Slice(fs, func(i, j int) bool {
			if fs[i].Album != fs[j].Album {
				return fs[i].Album < fs[j].Album
			}
			if fs[i].Title != fs[j].Title {
				return fs[i].Title < fs[j].Title
			}
			return fs[i].ID < fs[j].ID
		})
	}
}
