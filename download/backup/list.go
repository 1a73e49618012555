package backup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// lister walks what the account can see: every album once, then the
// changed ones page by page, each page handled by the pager and committed
// with the cursor it reached.
type lister struct {
	st           *state.Store
	lib          Library
	policy       retry.Policy
	shown        string // DIR as the run was given it
	filter       filter.Set
	metadataOnly bool
	albums       *albumSet
	recorder     *albumRecorder
	retries      *retrier
	space        *spaceCheck // nil: no free-space check
	relink       *relinker
	pages        *pager
	views        *views.Keeper
	seen         *proof
	down         *outage
	tally        *tally
	commit       func([]*state.File, *state.Collection) error
}

// sync lists every album (one call), retries last run's failures, then
// brings each changed album up to date. A no-change run therefore makes a
// single listing call.
func (l *lister) sync(ctx context.Context) error {
	if err := l.albums.load(); err != nil {
		return err
	}
	albums, err := l.listAlbums(ctx)
	if err != nil {
		return err
	}
	if err := l.checkPatterns(albums); err != nil {
		return err
	}
	if !l.metadataOnly {
		if err := l.beforeListing(ctx, albums); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(albums)) {
		a := albums[id]
		if !a.Deleted && !takeAlbum(l.filter, a) {
			l.tally.count(func(s *Summary) { s.AlbumsLeftOut++ })
			continue // left out by the filters: its cursor stays, for a wider run
		}
		if err := l.syncAlbum(ctx, a); err != nil {
			if err := diskError(l.shown, err); fatal(ctx, err) {
				return err
			}
			l.tally.count(func(s *Summary) { s.AlbumsFailed++ })
			l.tally.emit(Event{Kind: AlbumFailed, Album: a.Name, CollectionID: a.ID, Err: err})
		}
	}
	return ctx.Err()
}

// listAlbums lists and opens every album the account can see; one that does
// not open is counted and told.
func (l *lister) listAlbums(ctx context.Context) (map[int64]*catalog.Album, error) {
	var list []apiclient.Collection
	err := retry.Do(ctx, l.policy, func(ctx context.Context) error {
		var err error
		list, err = l.lib.Collections(ctx, 0)
		return err
	})
	if retry.Unreachable(err) && ctx.Err() == nil {
		return nil, &UnreachableError{InARow: 1, Err: err} // nothing can be done without the listing
	}
	if err != nil {
		return nil, fmt.Errorf("listing albums: %w", err)
	}
	albums := map[int64]*catalog.Album{}
	for i := range list {
		a, err := l.lib.OpenAlbum(&list[i])
		if err != nil {
			l.tally.count(func(s *Summary) { s.AlbumsFailed++ })
			l.tally.emit(Event{Kind: AlbumFailed, CollectionID: list[i].ID, Err: err})
			continue
		}
		albums[a.ID] = a
		l.seen.tombstones[a.ID] = a.Deleted
	}
	return albums, nil
}

// beforeListing checks the free space, retries last run's failures and
// refreshes stale copies: everything a full run does before it lists what
// changed.
func (l *lister) beforeListing(ctx context.Context, albums map[int64]*catalog.Album) error {
	if l.space != nil {
		if err := l.space.check(ctx, albums); err != nil {
			return err
		}
	}
	if err := l.retries.retry(ctx, albums); err != nil {
		return err
	}
	return l.relink.stale()
}

// checkPatterns fails the run with a *filter.NoMatchError when an
// --albums pattern matches no album the account can see.
func (l *lister) checkPatterns(albums map[int64]*catalog.Album) error {
	names := map[int64]string{}
	var all []string
	for id, a := range albums {
		if !a.Deleted {
			names[id] = a.Name
			all = append(all, a.Name)
		}
	}
	slices.Sort(all)
	if miss := l.filter.Albums.Unmatched(names); len(miss) > 0 {
		return &filter.NoMatchError{Pattern: miss[0], Nearest: filter.Nearest(miss[0], all, 3)}
	}
	return nil
}

// syncAlbum records the album (new, renamed or deleted) and, when it changed
// since its cursor, walks its diff page by page.
func (l *lister) syncAlbum(ctx context.Context, a *catalog.Album) error {
	if a.Deleted {
		return l.recorder.gone(l.albums.all()[a.ID])
	}
	c, err := l.recorder.recordAlbum(a)
	if err != nil {
		return err
	}
	since, floor, list := listFrom(a, c)
	if l.metadataOnly {
		// Everything is listed again, and the cursor stays where it is, so
		// the next full run still downloads what is new.
		since, floor = 0, -1
		if err := l.views.RefreshAlbumMeta(c); err != nil {
			return err
		}
	} else if !list {
		return nil
	}
	return l.walk(ctx, a, c, since, floor)
}

// walk goes through album a's diff from since, page by page, the next page
// listed while this one downloads, committing each page with the cursor it
// reached.
func (l *lister) walk(ctx context.Context, a *catalog.Album, c *state.Collection, since, floor int64) error {
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	pending := l.listPage(lctx, a.ID, since)
	for pages := 1; ; pages++ {
		if pages > maxListingPages {
			return errEndless
		}
		res := <-pending
		page, err := res.page, res.err
		if err != nil {
			return l.listingFailed(ctx, c, err)
		}
		nextSince := apiclient.DiffCursor(since, page.Diff)
		if page.HasMore && nextSince > since {
			pending = l.listPage(lctx, a.ID, nextSince)
		}
		done, err := l.applyPage(ctx, a, c, page, floor)
		if err != nil || done {
			return err
		}
		if nextSince <= since {
			return stuckListing(since)
		}
		since = nextSince
	}
}

// listingFailed handles a page that could not be listed: an outage stops
// the run, an album gone since the listing is recorded gone.
func (l *lister) listingFailed(ctx context.Context, c *state.Collection, err error) error {
	// A listing that answers says nothing of the object store, so only its
	// failures count.
	if uerr := l.down.observe(ctx, err); uerr != nil {
		return uerr
	}
	var ae *errs.ApiError
	if errors.As(err, &ae) && ae.Status == 404 {
		l.seen.mu.Lock()
		l.seen.vanished++ // not a tombstone: --prune will not act on this run
		l.seen.mu.Unlock()
		return l.recorder.gone(c) // deleted since the listing
	}
	return fmt.Errorf("listing files: %w", err)
}

// applyPage handles one page and commits it with the cursor it reached.
// done says the album is up to date (or stopped).
func (l *lister) applyPage(ctx context.Context, a *catalog.Album, c *state.Collection, page *apiclient.DiffPage, floor int64) (done bool, err error) {
	entries, err := l.unapplied(page.Diff, c.ID, floor)
	if err != nil {
		return true, err
	}
	files, complete, err := l.pages.apply(ctx, a, c, entries)
	next := *c
	if complete && !l.metadataOnly {
		next.Cursor = apiclient.DiffCursor(c.Cursor, page.Diff)
		if !page.HasMore {
			next.Cursor = max(next.Cursor, a.UpdationTime)
			next.Seen = a.UpdationTime
		}
	}
	if cerr := l.commit(files, &next); cerr != nil {
		return true, errors.Join(err, cerr)
	}
	*c = next
	return err != nil || !complete || !page.HasMore, err
}

// pageResult is one page of an album's listing, or why it could not be had.
type pageResult struct {
	page *apiclient.DiffPage
	err  error
}

// listPage lists album id's page after since in the background.
func (l *lister) listPage(ctx context.Context, id, since int64) <-chan pageResult {
	out := make(chan pageResult, 1)
	go func() {
		var page *apiclient.DiffPage
		err := retry.Do(ctx, l.policy, func(ctx context.Context) error {
			var err error
			page, err = l.lib.Diff(ctx, id, since)
			return err
		})
		out <- pageResult{page, err}
	}()
	return out
}

// unapplied drops from a listing page the entries at or below floor that
// this backup applied already: the same file in the same album at the same
// time. What is left is new, or a late commit.
func (l *lister) unapplied(entries []apiclient.File, cid, floor int64) ([]apiclient.File, error) {
	out := make([]apiclient.File, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.UpdationTime > floor {
			out = append(out, *e)
			continue
		}
		sf, err := l.st.File(e.ID)
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

// albumRecorder records each album as the listing shows it, and keeps its
// folder in step: new (its folder picked, or an `ente export`'s adopted),
// renamed, back, deleted, or with another visibility.
type albumRecorder struct {
	root   string // DIR, absolute
	albums *albumSet
	names  *names
	adopt  *adopter
	views  *views.Keeper
	disk   disk
	tally  *tally
	commit func([]*state.File, *state.Collection) error
}

// recordAlbum records album a as the listing shows it: new (its folder
// picked), renamed or back (its folder moved), or with another visibility.
func (ar *albumRecorder) recordAlbum(a *catalog.Album) (*state.Collection, error) {
	c := ar.albums.all()[a.ID]
	switch {
	case c == nil:
		return ar.newCollection(a)
	case c.Name != a.Name || c.Deleted || hiddenFolder(c):
		if c.Deleted {
			// It came back (shared again, say): its cursor is past files a
			// prune took away, so it is listed from scratch.
			c.Cursor, c.Seen, c.Pruned = 0, 0, false
		}
		c.Visibility = a.Visibility
		return c, ar.renameAlbum(c, a)
	case c.Visibility != a.Visibility:
		c.Visibility = a.Visibility
		if err := ar.views.WriteAlbumMeta(c); err != nil {
			return nil, err
		}
		return c, ar.commit(nil, c)
	}
	return c, nil
}

// gone records an album deleted on the server (or left); its folder stays.
func (ar *albumRecorder) gone(c *state.Collection) error {
	if c == nil || c.Deleted {
		return nil
	}
	c.Deleted = true
	ar.tally.count(func(s *Summary) { s.AlbumsDeleted++ })
	ar.tally.emit(Event{Kind: AlbumDeleted, Album: c.Name, CollectionID: c.ID, Path: c.Folder})
	if err := ar.views.WriteAlbumMeta(c); err != nil {
		return err
	}
	return ar.commit(ar.views.AlbumFiles(c), c)
}

// newCollection picks the album's folder: an existing `ente export` folder
// of the same album is adopted, any other existing folder is left alone.
func (ar *albumRecorder) newCollection(a *catalog.Album) (*state.Collection, error) {
	want := layout.SanitizeFolder(a.Name, fmt.Sprintf("Album %d", a.ID))
	var name string
	ar.names.top(ar.albums.all(), func(n *layout.Namer) {
		name = n.UniqueFree(want, func(name string) bool {
			id, exists := ar.adopt.folderAlbum(name)
			return !exists || id == a.ID
		})
	})
	c := &state.Collection{ID: a.ID, Name: a.Name, Folder: name, Type: a.Type, OwnerID: a.OwnerID, Visibility: a.Visibility}
	if err := ar.adopt.scanExport(c); err != nil {
		return nil, err
	}
	if err := ar.views.WriteAlbumMeta(c); err != nil {
		return nil, err
	}
	ar.albums.add(c)
	return c, ar.commit(nil, c)
}

// hiddenFolder reports an album folder an older quak named with a leading
// dot, which file managers hide: it moves to a visible name.
func hiddenFolder(c *state.Collection) bool { return strings.HasPrefix(c.Folder, ".") }

// renameAlbum moves the album's folder to its new name.
func (ar *albumRecorder) renameAlbum(c *state.Collection, a *catalog.Album) error {
	c.Deleted = false
	if c.Name == a.Name && !hiddenFolder(c) {
		return ar.commit(ar.views.AlbumFiles(c), c)
	}
	want := layout.SanitizeFolder(a.Name, fmt.Sprintf("Album %d", a.ID))
	var name string
	ar.names.top(ar.albums.all(), func(n *layout.Namer) {
		n.Release(c.Folder)
		name = n.UniqueFree(want, func(name string) bool {
			_, exists := ar.adopt.folderAlbum(name)
			return !exists || strings.EqualFold(name, c.Folder)
		})
	})
	if name != c.Folder {
		if err := ar.moveFolder(c.Folder, name); err != nil {
			return err
		}
	}
	ar.tally.emit(Event{Kind: AlbumRenamed, Album: a.Name, CollectionID: a.ID, Path: name})
	c.Name, c.Folder = a.Name, name
	if err := ar.views.WriteAlbumMeta(c); err != nil {
		return err
	}
	return ar.commit(ar.views.AlbumFiles(c), c)
}

// moveFolder moves an album folder to a new name under DIR.
func (ar *albumRecorder) moveFolder(from, to string) error {
	src, err := layout.Join(ar.root, from)
	if err != nil {
		return err
	}
	dst, err := layout.Join(ar.root, to)
	if err != nil {
		return err
	}
	if err := ar.disk.Rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("moving the album folder: %w", err)
	}
	ar.disk.Changed(ar.root)
	return nil
}
