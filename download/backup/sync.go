package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// sync lists every album (one call), retries last run's failures, then
// brings each changed album up to date. A no-change run therefore makes a
// single listing call.
func (r *run) sync(ctx context.Context, cancel context.CancelCauseFunc) error {
	var err error
	if r.colls, err = r.st.Collections(); err != nil {
		return err
	}
	r.folders = layout.NewNamer()
	for _, name := range reservedTop {
		r.folders.Take(name)
	}
	for _, c := range r.colls {
		r.folders.Take(c.Folder)
	}
	var list []apiclient.Collection
	err = retry.Do(ctx, r.fetcher.Policy, func(ctx context.Context) error {
		var err error
		list, err = r.o.Client.Collections(ctx, 0)
		return err
	})
	if retry.Unreachable(err) && ctx.Err() == nil {
		return &UnreachableError{InARow: 1, Err: err} // nothing can be done without the listing
	}
	if err != nil {
		return fmt.Errorf("listing albums: %w", err)
	}
	albums := map[int64]*catalog.Album{}
	for i := range list {
		a, err := catalog.OpenAlbum(&list[i], r.o.Keys)
		if err != nil {
			r.sum.AlbumsFailed++
			r.emit(Event{Kind: AlbumFailed, CollectionID: list[i].ID, Err: err})
			continue
		}
		albums[a.ID] = a
		r.tombstones[a.ID] = a.Deleted
	}
	if err := r.checkPatterns(albums); err != nil {
		return err
	}
	if r.o.FreeSpace != nil && !r.o.MetadataOnly {
		if err := r.checkSpace(ctx, albums); err != nil {
			return err
		}
	}
	if !r.o.MetadataOnly {
		if err := r.retryFailed(ctx, albums, cancel); err != nil {
			return err
		}
		if err := r.relinkStale(); err != nil {
			return err
		}
	}
	ids := make([]int64, 0, len(albums))
	for id := range albums {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		a := albums[id]
		if !a.Deleted && !r.takeAlbum(a) {
			r.sum.AlbumsLeftOut++
			continue // left out by the filters: its cursor stays, for a wider run
		}
		if err := r.syncAlbum(ctx, a, cancel); err != nil {
			if err := r.diskError(err); fatal(ctx, err) {
				return err
			}
			r.sum.AlbumsFailed++
			r.emit(Event{Kind: AlbumFailed, Album: a.Name, CollectionID: a.ID, Err: err})
		}
	}
	return ctx.Err()
}

// checkPatterns fails the run with a *filter.NoMatchError when an
// --albums pattern matches no album the account can see.
func (r *run) checkPatterns(albums map[int64]*catalog.Album) error {
	names := map[int64]string{}
	var all []string
	for id, a := range albums {
		if !a.Deleted {
			names[id] = a.Name
			all = append(all, a.Name)
		}
	}
	sort.Strings(all)
	if miss := r.o.Filter.Albums.Unmatched(names); len(miss) > 0 {
		return &filter.NoMatchError{Pattern: miss[0], Nearest: filter.Nearest(miss[0], all, 3)}
	}
	return nil
}

// syncAlbum records the album (new, renamed or deleted) and, when it changed
// since its cursor, walks its diff page by page.
func (r *run) syncAlbum(ctx context.Context, a *catalog.Album, cancel context.CancelCauseFunc) error {
	c := r.colls[a.ID]
	if a.Deleted {
		return r.albumGone(c)
	}
	switch {
	case c == nil:
		var err error
		if c, err = r.newCollection(a); err != nil {
			return err
		}
	case c.Name != a.Name || c.Deleted:
		if c.Deleted {
			// It came back (shared again, say): its cursor is past files a
			// prune took away, so it is listed from scratch.
			c.Cursor, c.Seen, c.Pruned = 0, 0, false
		}
		c.Visibility = a.Visibility
		if err := r.renameAlbum(c, a); err != nil {
			return err
		}
	case c.Visibility != a.Visibility:
		c.Visibility = a.Visibility
		if err := r.commit(nil, c); err != nil {
			return err
		}
	}
	since, floor, list := listFrom(a, c)
	if r.o.MetadataOnly {
		// Everything is listed again, and the cursor stays where it is, so
		// the next full run still downloads what is new.
		since, floor = 0, -1
		if err := r.refreshAlbumMeta(c); err != nil {
			return err
		}
	} else if !list {
		return nil
	}
	// The next page is listed while this one downloads.
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	pending := r.listPage(lctx, a.ID, since)
	for {
		res := <-pending
		page, err := res.page, res.err
		// A listing that answers says nothing of the object store, so
		// only its failures count.
		if err != nil {
			if uerr := r.down.observe(ctx, err); uerr != nil {
				return uerr
			}
		}
		var ae *errs.ApiError
		if errors.As(err, &ae) && ae.Status == 404 {
			r.mu.Lock()
			r.vanished++ // not a tombstone: --prune will not act on this run
			r.mu.Unlock()
			return r.albumGone(c) // deleted since the listing
		}
		if err != nil {
			return fmt.Errorf("listing files: %w", err)
		}
		nextSince := apiclient.DiffCursor(since, page.Diff)
		if page.HasMore && nextSince > since {
			pending = r.listPage(lctx, a.ID, nextSince)
		}
		entries, err := r.unapplied(page.Diff, c.ID, floor)
		if err != nil {
			return err
		}
		files, complete, err := r.page(ctx, a, c, entries, cancel)
		next := *c
		if complete && !r.o.MetadataOnly {
			next.Cursor = apiclient.DiffCursor(c.Cursor, page.Diff)
			if !page.HasMore {
				next.Cursor = max(next.Cursor, a.UpdationTime)
				next.Seen = a.UpdationTime
			}
		}
		if cerr := r.commit(files, &next); cerr != nil {
			return errors.Join(err, cerr)
		}
		*c = next
		if err != nil || !complete {
			return err
		}
		if !page.HasMore {
			return nil
		}
		if nextSince <= since {
			return fmt.Errorf("listing files: the server says there is more but its listing does not advance (at %d)", since)
		}
		since = nextSince
	}
}

// listed is one page of an album's listing, or why it could not be had.
type listed struct {
	page *apiclient.DiffPage
	err  error
}

// listPage lists album id's page after since in the background.
func (r *run) listPage(ctx context.Context, id, since int64) <-chan listed {
	out := make(chan listed, 1)
	go func() {
		var page *apiclient.DiffPage
		err := retry.Do(ctx, r.fetcher.Policy, func(ctx context.Context) error {
			var err error
			page, err = r.o.Client.Diff(ctx, id, since)
			return err
		})
		out <- listed{page, err}
	}()
	return out
}

// ListOverlap is how far behind its cursor an album that changed is
// listed again, in µs (10 minutes). museum stamps an entry's updationTime
// when the upload request arrives and commits it up to seconds later
// (after checking the object store, up to ~1.5 s of retries), then sets
// the album's time to that stamp, not to the latest: an entry can appear
// below a cursor a run has already passed. Entries listed again are
// applied only if this backup has not applied them (by file id and time).
const ListOverlap = 10 * 60 * 1_000_000

// listFrom says whether album a is listed this run, from which sinceTime,
// and floor, the cursor at or below which entries may be applied already.
// An album is listed when its time differs from the one of its last full
// listing, in either direction (museum can set it back).
func listFrom(a *catalog.Album, c *state.Collection) (since, floor int64, list bool) {
	return max(c.Cursor-ListOverlap, 0), c.Cursor, c.Seen == 0 || a.UpdationTime != c.Seen
}

// unapplied drops from a listing page the entries at or below floor that
// this backup applied already: the same file in the same album at the same
// time. What is left is new, or a late commit.
func (r *run) unapplied(entries []apiclient.File, cid, floor int64) ([]apiclient.File, error) {
	out := make([]apiclient.File, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.UpdationTime > floor {
			out = append(out, *e)
			continue
		}
		sf, err := r.st.File(e.ID)
		if err != nil {
			return nil, err
		}
		if !applied(sf, e, cid) {
			out = append(out, *e)
		}
	}
	return out, nil
}

// applied reports whether listing entry e of album cid is reflected in sf.
func applied(sf *state.File, e *apiclient.File, cid int64) bool {
	if sf == nil {
		return e.IsDeleted // a file never saved, deleted: nothing to do
	}
	local := sf.Entries[cid]
	switch {
	case local != nil && local.Updated == e.UpdationTime:
		return true
	case pendingIn(sf, cid, e.UpdationTime):
		return true // failed or left out: retried from its record
	}
	return e.IsDeleted && (local == nil || local.Deleted)
}

// pendingIn reports whether sf waits for a retry with its entry in album
// cid at time t.
func pendingIn(sf *state.File, cid, t int64) bool {
	for _, p := range append([]*apiclient.File{sf.Pending}, sf.PendingAlso...) {
		if p != nil && p.CollectionID == cid && p.UpdationTime == t {
			return true
		}
	}
	return false
}

// tombstone reports whether this run's listing shows album id deleted.
func (r *run) tombstone(id int64) bool { return r.tombstones[id] }

// albumGone records an album deleted on the server (or left); its folder stays.
func (r *run) albumGone(c *state.Collection) error {
	if c == nil || c.Deleted {
		return nil
	}
	c.Deleted = true
	r.sum.AlbumsDeleted++
	r.emit(Event{Kind: AlbumDeleted, Album: c.Name, CollectionID: c.ID, Path: c.Folder})
	if err := r.writeAlbumMeta(c); err != nil {
		return err
	}
	return r.commit(r.albumFiles(c), c)
}

// newCollection picks the album's folder: an existing `ente export` folder
// of the same album is adopted, any other existing folder is left alone.
func (r *run) newCollection(a *catalog.Album) (*state.Collection, error) {
	want := layout.Sanitize(a.Name, fmt.Sprintf("Album %d", a.ID))
	r.mu.Lock()
	folder := r.folders.UniqueFree(want, func(name string) bool {
		id, exists := r.folderAlbum(name)
		return !exists || id == a.ID
	})
	r.mu.Unlock()
	c := &state.Collection{ID: a.ID, Name: a.Name, Folder: folder, Type: a.Type, OwnerID: a.OwnerID, Visibility: a.Visibility}
	if err := r.scanExport(c); err != nil {
		return nil, err
	}
	if err := r.writeAlbumMeta(c); err != nil {
		return nil, err
	}
	r.colls[a.ID] = c
	return c, r.commit(nil, c)
}

// folderAlbum reports whether folder exists under DIR and, if it has an
// `ente export` album_meta.json, the album id it names (0 otherwise).
func (r *run) folderAlbum(folder string) (id int64, exists bool) {
	p, err := layout.Join(r.dir, folder)
	if err != nil {
		return 0, true
	}
	if _, err := os.Stat(p); err != nil {
		return 0, false
	}
	var m albumMeta
	b, err := os.ReadFile(filepath.Join(p, ".meta", "album_meta.json"))
	if err == nil && json.Unmarshal(b, &m) == nil {
		return m.ID, true
	}
	return 0, true
}

// scanExport reads the sidecars of an adopted folder, so the files they
// describe can be checked instead of downloaded again.
func (r *run) scanExport(c *state.Collection) error {
	meta, err := layout.Join(r.dir, c.Folder, ".meta")
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(meta)
	if err != nil {
		return nil //nolint:nilerr // no sidecars: nothing to adopt
	}
	found := map[int64][]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || e.Name() == "album_meta.json" {
			continue
		}
		var sc struct {
			Info struct {
				ID        int64    `json:"id"`
				FileNames []string `json:"fileNames"`
			} `json:"info"`
		}
		b, err := os.ReadFile(filepath.Join(meta, e.Name()))
		if err != nil || json.Unmarshal(b, &sc) != nil || sc.Info.ID == 0 || len(sc.Info.FileNames) == 0 {
			continue
		}
		names := make([]string, 0, len(sc.Info.FileNames))
		for _, n := range sc.Info.FileNames {
			if layout.Sanitize(n, "") == n { // names that would leave the folder are ignored
				names = append(names, n)
			}
		}
		if len(names) == len(sc.Info.FileNames) {
			found[sc.Info.ID] = names
		}
	}
	r.mu.Lock()
	r.adopt[c.ID] = found
	r.mu.Unlock()
	return nil
}

// renameAlbum moves the album's folder to its new name.
func (r *run) renameAlbum(c *state.Collection, a *catalog.Album) error {
	c.Deleted = false
	if c.Name == a.Name {
		return r.commit(r.albumFiles(c), c)
	}
	want := layout.Sanitize(a.Name, fmt.Sprintf("Album %d", a.ID))
	r.mu.Lock()
	r.folders.Release(c.Folder)
	folder := r.folders.UniqueFree(want, func(name string) bool {
		_, exists := r.folderAlbum(name)
		return !exists || strings.EqualFold(name, c.Folder)
	})
	r.mu.Unlock()
	if folder != c.Folder {
		from, err := layout.Join(r.dir, c.Folder)
		if err != nil {
			return err
		}
		to, err := layout.Join(r.dir, folder)
		if err != nil {
			return err
		}
		if err := r.rename(from, to); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("moving the album folder: %w", err)
		}
		r.mu.Lock()
		r.dirty[r.dir] = true
		r.mu.Unlock()
	}
	r.emit(Event{Kind: AlbumRenamed, Album: a.Name, CollectionID: a.ID, Path: folder})
	c.Name, c.Folder = a.Name, folder
	if err := r.writeAlbumMeta(c); err != nil {
		return err
	}
	return r.commit(r.albumFiles(c), c)
}

func (r *run) writeAlbumMeta(c *state.Collection) error {
	p, err := layout.Join(r.dir, c.Folder, ".meta", "album_meta.json")
	if err != nil {
		return err
	}
	return r.writeJSON(p, albumMeta{ID: c.ID, OwnerID: c.OwnerID, AlbumName: c.Name, IsDeleted: c.Deleted,
		AccountOwnerIDs: []int64{r.o.Keys.UserID}})
}

// takeAlbum applies the run's album filters.
func (r *run) takeAlbum(a *catalog.Album) bool {
	return r.o.Filter.TakeAlbum(filter.Album{ID: a.ID, Name: a.Name, OwnerID: a.OwnerID, Visibility: a.Visibility})
}

// pendingFiles are the failed and left-out files whose records keep a
// diff entry to retry from.
func (r *run) pendingFiles() ([]*state.File, error) {
	var ids []int64
	err := r.st.Briefs(func(b state.Brief) error {
		if (b.Status == state.Failed || b.Status == state.Skipped) && b.Pending {
			ids = append(ids, b.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*state.File, 0, len(ids))
	for _, id := range ids {
		f, err := r.st.File(id)
		if err != nil {
			return nil, err
		}
		if f != nil && (f.Status == state.Failed || f.Status == state.Skipped) && f.Pending != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// retryFailed retries last run's failed files first, from their recorded
// diff entries (in every album that listed them), before anything is
// listed; and files earlier filters left out that this run's filters take.
func (r *run) retryFailed(ctx context.Context, albums map[int64]*catalog.Album, cancel context.CancelCauseFunc) error {
	pending, err := r.pendingFiles()
	if err != nil {
		return err
	}
	byAlbum := map[int64][]apiclient.File{}
	for _, f := range pending {
		for _, p := range append([]*apiclient.File{f.Pending}, f.PendingAlso...) {
			a := albums[p.CollectionID]
			if a == nil || a.Deleted || r.colls[a.ID] == nil || !r.takeAlbum(a) {
				continue
			}
			if f.Status == state.Skipped {
				if it, err := catalog.OpenItem(p, a); err != nil || !r.takeFile(it) {
					continue // still left out
				}
			}
			byAlbum[a.ID] = append(byAlbum[a.ID], *p)
		}
	}
	ids := make([]int64, 0, len(byAlbum))
	for id := range byAlbum {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		entries := byAlbum[id]
		files, _, err := r.page(ctx, albums[id], r.colls[id], entries, cancel)
		if cerr := r.commit(files, nil); cerr != nil {
			return errors.Join(err, cerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
