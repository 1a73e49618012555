package backup

import (
	"context"
	"path/filepath"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/state"
)

// proof is what this run's listings showed: what --prune acts on.
type proof struct {
	mu sync.Mutex
	// tombstones are the albums the listing shows deleted; goneNow, the
	// album copies their diffs show deleted; listed, the latest
	// updationTime shown for each album entry (latestOnly); vanished
	// counts albums whose diff answered 404 though listed as live.
	tombstones map[int64]bool
	goneNow    map[entryKey]bool
	listed     map[entryKey]int64
	vanished   int
}

func newProof() *proof {
	return &proof{tombstones: map[int64]bool{}, goneNow: map[entryKey]bool{}, listed: map[entryKey]int64{}}
}

// entryKey is a file's entry in an album.
type entryKey struct{ file, collection int64 }

// pageWork is what one page of a listing asks for: the records to commit,
// and the files to download with their earlier records.
type pageWork struct {
	mu    sync.Mutex
	out   []*state.File
	jobs  []*catalog.Item
	prev  map[int64]*state.File
	bytes int64
}

func (w *pageWork) add(f *state.File) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out = append(w.out, f)
}

func (w *pageWork) download(it *catalog.Item, sf *state.File) {
	w.jobs = append(w.jobs, it)
	w.prev[it.FileID] = sf
	w.bytes += plainSize(it.Size)
}

// saveFunc downloads and places one file of album c, named named when
// set, and returns its record; only errors that stop the run are
// returned (a failed file comes back as a Failed record).
type saveFunc func(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error)

// pager decides what each entry of a listing page asks for (a download, an
// update of what is saved, a deletion mark, a skip) and does it: downloads
// several at once, everything else inline.
type pager struct {
	st           *state.Store
	shown        string // DIR as the run was given it
	filter       filter.Set
	metadataOnly bool
	seen         *proof
	names        *partNames
	expected     *expected
	adopt        *adopter
	update       *updater
	refresh      *refresher
	save         saveFunc // placer.download, or pretender.pretend in a dry run
	workers      int      // downloads of a page under way at once
	tally        *tally
}

// apply handles one page of an album's entries: downloads run concurrently,
// everything else inline. It returns the records to commit, whether every
// entry was saved or recorded as failed, and an error that stops the run.
func (pg *pager) apply(ctx context.Context, a *catalog.Album, c *state.Collection, entries []apiclient.File) ([]*state.File, bool, error) {
	w := &pageWork{prev: map[int64]*state.File{}}
	for _, raw := range pg.latestOnly(c.ID, entries) {
		if err := pg.entry(ctx, a, c, &raw, w); err != nil {
			return w.out, false, err
		}
	}
	if len(w.jobs) > 0 {
		pg.tally.emit(Event{Kind: Planned, Album: a.Name, Files: len(w.jobs), Bytes: w.bytes})
	}
	// Name single files now, in the page's order, so that which of two
	// colliding titles gets the plain name never depends on download timing.
	// (A live photo's part names wait for its zip's extensions.)
	names := map[int64][]string{}
	for _, it := range w.jobs {
		pg.expected.expect(it.FileID, it.Meta.Hash)
		if !catalog.IsLivePhoto(it.Meta) {
			names[it.FileID] = pg.names.name(c, pg.adopt.previous(w.prev[it.FileID], c, it), it.FileID, it.Meta.Title, []string{""})
		}
	}
	err := pg.fetchAll(ctx, a, c, w, names)
	switch {
	case ctx.Err() != nil:
		return w.out, false, context.Cause(ctx)
	case err != nil:
		return w.out, false, err
	}
	return w.out, true, nil
}

// fetchAll downloads the page's files, at most workers at once, and adds
// each record; the first error that stops the run ends the others and is
// returned.
func (pg *pager) fetchAll(ctx context.Context, a *catalog.Album, c *state.Collection, w *pageWork, names map[int64][]string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(pg.workers, 1))
	for _, it := range w.jobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // stopped while this one waited for its turn
			}
			rec, err := pg.save(gctx, it, w.prev[it.FileID], a, c, names[it.FileID])
			if err != nil {
				return err
			}
			w.add(stamp(rec, c.ID, it.Raw.UpdationTime))
			return nil
		})
	}
	return g.Wait()
}

// entry decides what one listing entry asks for: a failure, a deletion, a
// metadata refresh, a file left out, a download, or an update of what is
// saved. It returns only the errors that stop the run.
func (pg *pager) entry(ctx context.Context, a *catalog.Album, c *state.Collection, raw *apiclient.File, w *pageWork) error {
	if !raw.IsDeleted {
		pg.seen.mu.Lock()
		delete(pg.seen.goneNow, entryKey{raw.ID, c.ID}) // an older entry's deletion no longer holds
		pg.seen.mu.Unlock()
	}
	sf, err := pg.st.File(raw.ID)
	if err != nil {
		return err
	}
	it, err := catalog.OpenItem(raw, a)
	switch {
	case err != nil:
		w.add(failedRecord(pg.tally, sf, raw, a, "", err))
	case it.Deleted:
		pg.markDeleted(sf, raw, a, c, w)
	case pg.metadataOnly && (fresh(sf) || sf.Header != keys.EncodeB64(it.Header)):
		// media: left for a full run, whose cursor has not moved
	case pg.metadataOnly:
		rec, err := pg.refresh.refresh(it, sf, a, c)
		return pg.settle(ctx, stamp(rec, c.ID, raw.UpdationTime), err, sf, raw, a, it, w)
	case fresh(sf) && !takeFile(pg.filter, it):
		w.add(pg.skip(sf, raw, a, it))
	case fresh(sf) || sf.Header != keys.EncodeB64(it.Header):
		if rec := pg.adopt.adoptExisting(it, sf, a, c); rec != nil {
			w.add(stamp(rec, c.ID, raw.UpdationTime))
			return nil
		}
		if rec := pg.adopt.adoptContent(ctx, it, sf, a, c); rec != nil {
			w.add(stamp(rec, c.ID, raw.UpdationTime))
			return nil
		}
		w.download(it, sf)
	default:
		rec, again, err := pg.update.update(it, sf, a, c)
		if again {
			w.download(it, sf)
			return nil
		}
		return pg.settle(ctx, stamp(rec, c.ID, raw.UpdationTime), err, sf, raw, a, it, w)
	}
	return nil
}

// latestOnly keeps, of the entries a listing carries for one file in album
// cid, only the one of the latest updationTime, also across this run's
// earlier pages: a broken or hostile server may list a file twice, and an
// older entry is never applied after a newer one, nor saved a second time.
// Of two entries of the same time, a live one wins over a deletion.
func (pg *pager) latestOnly(cid int64, entries []apiclient.File) []apiclient.File {
	at := map[int64]int{}
	out := make([]apiclient.File, 0, len(entries))
	pg.seen.mu.Lock()
	defer pg.seen.mu.Unlock()
	for _, e := range entries {
		k := entryKey{e.ID, cid}
		if t, ok := pg.seen.listed[k]; ok && (e.UpdationTime < t || (e.UpdationTime == t && e.IsDeleted)) {
			continue
		}
		pg.seen.listed[k] = e.UpdationTime
		if i, ok := at[e.ID]; ok {
			out[i] = e
			continue
		}
		at[e.ID] = len(out)
		out = append(out, e)
	}
	return out
}

// settle adds an entry's record, or records it failed; it returns only
// the errors that stop the run (a full or read-only disk).
func (pg *pager) settle(ctx context.Context, rec *state.File, err error, sf *state.File, raw *apiclient.File, a *catalog.Album,
	it *catalog.Item, w *pageWork) error {
	switch {
	case fatal(ctx, diskError(pg.shown, err)):
		return diskError(pg.shown, err)
	case err != nil:
		w.add(failedRecord(pg.tally, sf, raw, a, it.Meta.Title, err))
	case rec != nil:
		w.add(rec)
	}
	return nil
}

// skip records a file the filters left out, with its diff entry, so a
// later run with wider filters downloads it without listing again.
func (pg *pager) skip(sf *state.File, raw *apiclient.File, a *catalog.Album, it *catalog.Item) *state.File {
	rec := record(it, sf)
	rec.Status, rec.Error, rec.Meta = state.Skipped, "", it.Meta
	pend(rec, raw)
	pg.tally.count(func(s *Summary) { s.Skipped++ }) // not touched: a partial download of it is not needed
	pg.tally.emit(Event{Kind: FileSkipped, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: a.ID})
	return rec
}

// markDeleted marks an album entry removed or trashed on the server. The local
// copy is kept: quak is an archive, not a mirror.
func (pg *pager) markDeleted(sf *state.File, raw *apiclient.File, a *catalog.Album, c *state.Collection, w *pageWork) {
	if sf == nil || sf.Entries[c.ID] == nil {
		return
	}
	pg.seen.mu.Lock()
	pg.seen.goneNow[entryKey{sf.ID, c.ID}] = true
	pg.seen.mu.Unlock()
	if sf.Entries[c.ID].Deleted {
		return
	}
	rec := record(&catalog.Item{FileID: sf.ID, OwnerID: sf.OwnerID}, sf)
	e := rec.Entries[c.ID]
	e.Deleted = true
	pg.tally.count(func(s *Summary) { s.DeletedOnServer++ })
	pg.tally.emit(Event{Kind: DeletedOnServer, Album: a.Name, Title: e.Meta.Title, FileID: sf.ID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, e.Name)})
	w.add(stamp(rec, c.ID, raw.UpdationTime))
}

// takeAlbum applies the run's album filters f.
func takeAlbum(f filter.Set, a *catalog.Album) bool {
	return f.TakeAlbum(filter.Album{ID: a.ID, Name: a.Name, OwnerID: a.OwnerID, Visibility: a.Visibility})
}

// takeFile applies the run's file filters f (type, creation time).
func takeFile(f filter.Set, it *catalog.Item) bool {
	return f.TakeFile(filter.File{FileType: it.Meta.FileType, CreationTime: it.Meta.CreationTime})
}
