package backup

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

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

// page handles one page of an album's entries: downloads run concurrently,
// everything else inline. It returns the records to commit, whether every
// entry was saved or recorded as failed, and an error that stops the run.
func (l *lister) page(ctx context.Context, a *catalog.Album, c *state.Collection, entries []apiclient.File, cancel context.CancelCauseFunc) ([]*state.File, bool, error) {
	w := &pageWork{prev: map[int64]*state.File{}}
	for _, raw := range l.latestOnly(c.ID, entries) {
		if err := l.entry(ctx, a, c, &raw, w); err != nil {
			return w.out, false, err
		}
	}
	if len(w.jobs) > 0 {
		l.emit(Event{Kind: Planned, Album: a.Name, Files: len(w.jobs), Bytes: w.bytes})
	}
	// Name single files now, in the page's order, so that which of two
	// colliding titles gets the plain name never depends on download timing.
	// (A live photo's part names wait for its zip's extensions.)
	names := map[int64][]string{}
	for _, it := range w.jobs {
		l.placer.expect(it)
		if !catalog.IsLivePhoto(it.Meta) {
			names[it.FileID] = l.placer.entryNames(c, l.placer.previous(w.prev[it.FileID], c, it), it.FileID, it.Meta.Title, []string{""})
		}
	}
	l.placer.fetchAll(ctx, cancel, a, c, w.jobs, w.prev, names, w.add)
	if ctx.Err() != nil {
		return w.out, false, context.Cause(ctx)
	}
	return w.out, true, nil
}

// entry decides what one listing entry asks for: a failure, a deletion, a
// metadata refresh, a file left out, a download, or an update of what is
// saved. It returns only the errors that stop the run.
func (l *lister) entry(ctx context.Context, a *catalog.Album, c *state.Collection, raw *apiclient.File, w *pageWork) error {
	if !raw.IsDeleted {
		l.seen.mu.Lock()
		delete(l.seen.goneNow, entryKey{raw.ID, c.ID}) // an older entry's deletion no longer holds
		l.seen.mu.Unlock()
	}
	sf, err := l.st.File(raw.ID)
	if err != nil {
		return err
	}
	it, err := catalog.OpenItem(raw, a)
	switch {
	case err != nil:
		w.add(l.fail(sf, raw, a, "", err))
	case it.Deleted:
		l.deleted(sf, raw, a, c, w)
	case l.o.MetadataOnly && (fresh(sf) || sf.Header != keys.EncodeB64(it.Header)):
		// media: left for a full run, whose cursor has not moved
	case l.o.MetadataOnly:
		rec, err := l.updater.refresh(it, sf, a, c)
		return l.settle(ctx, stamp(rec, c.ID, raw.UpdationTime), err, sf, raw, a, it, w)
	case fresh(sf) && !l.takeFile(it):
		w.add(l.skip(sf, raw, a, it))
	case fresh(sf) || sf.Header != keys.EncodeB64(it.Header):
		if rec := l.placer.adoptExisting(it, sf, a, c); rec != nil {
			w.add(stamp(rec, c.ID, raw.UpdationTime))
			return nil
		}
		w.download(it, sf)
	default:
		rec, again, err := l.updater.update(it, sf, a, c)
		if again {
			w.download(it, sf)
			return nil
		}
		return l.settle(ctx, stamp(rec, c.ID, raw.UpdationTime), err, sf, raw, a, it, w)
	}
	return nil
}

// latestOnly keeps, of the entries a listing carries for one file in album
// cid, only the one of the latest updationTime, also across this run's
// earlier pages: a broken or hostile server may list a file twice, and an
// older entry is never applied after a newer one, nor saved a second time.
// Of two entries of the same time, a live one wins over a deletion.
func (l *lister) latestOnly(cid int64, entries []apiclient.File) []apiclient.File {
	at := map[int64]int{}
	out := make([]apiclient.File, 0, len(entries))
	l.seen.mu.Lock()
	defer l.seen.mu.Unlock()
	for _, e := range entries {
		k := entryKey{e.ID, cid}
		if t, ok := l.seen.listed[k]; ok && (e.UpdationTime < t || (e.UpdationTime == t && e.IsDeleted)) {
			continue
		}
		l.seen.listed[k] = e.UpdationTime
		if i, ok := at[e.ID]; ok {
			out[i] = e
			continue
		}
		at[e.ID] = len(out)
		out = append(out, e)
	}
	return out
}

// stamp records in rec, a file saved in album cid, the updationTime of the
// listing entry it now reflects; a failed or skipped rec keeps its entry
// in Pending instead.
func stamp(rec *state.File, cid, t int64) *state.File {
	if rec != nil && !fresh(rec) && rec.Entries[cid] != nil {
		rec.Entries[cid].Updated = t
	}
	return rec
}

// record returns a copy of sf (or a new record) to update.
func record(it *catalog.Item, sf *state.File) *state.File {
	rec := &state.File{ID: it.FileID, OwnerID: it.OwnerID, Entries: map[int64]*state.Entry{}}
	if sf != nil {
		*rec = *sf
		rec.Entries = make(map[int64]*state.Entry, len(sf.Entries))
		for k, v := range sf.Entries {
			e := *v
			rec.Entries[k] = &e
		}
	}
	return rec
}

// fail records a file that could not be saved; the run goes on, and the
// next run retries it first.
func (j *job) fail(sf *state.File, raw *apiclient.File, a *catalog.Album, title string, err error) *state.File {
	rec := record(&catalog.Item{FileID: raw.ID, OwnerID: raw.OwnerID}, sf)
	rec.Status, rec.Error = state.Failed, err.Error()
	pend(rec, raw)
	j.tally.failedFile(folder.Failure{FileID: raw.ID, Album: a.Name, Title: title}, a.ID, err)
	return rec
}

// pend makes raw rec's pending entry, keeping the entries of other albums
// it was pending in (one per album).
func pend(rec *state.File, raw *apiclient.File) {
	var also []*apiclient.File
	for _, p := range append([]*apiclient.File{rec.Pending}, rec.PendingAlso...) {
		if p != nil && p.CollectionID != raw.CollectionID {
			also = append(also, p)
		}
	}
	rec.Pending, rec.PendingAlso = raw, also
}

// fresh reports a file with no saved content: new, failed or skipped.
func fresh(sf *state.File) bool {
	return sf == nil || sf.Status == state.Failed || sf.Status == state.Skipped
}

// settle adds an entry's record, or records it failed; it returns only
// the errors that stop the run (a full or read-only disk).
func (l *lister) settle(ctx context.Context, rec *state.File, err error, sf *state.File, raw *apiclient.File, a *catalog.Album,
	it *catalog.Item, w *pageWork) error {
	switch {
	case fatal(ctx, l.diskError(err)):
		return l.diskError(err)
	case err != nil:
		w.add(l.fail(sf, raw, a, it.Meta.Title, err))
	case rec != nil:
		w.add(rec)
	}
	return nil
}

// skip records a file the filters left out, with its diff entry, so a
// later run with wider filters downloads it without listing again.
func (l *lister) skip(sf *state.File, raw *apiclient.File, a *catalog.Album, it *catalog.Item) *state.File {
	rec := record(it, sf)
	rec.Status, rec.Error, rec.Meta = state.Skipped, "", it.Meta
	pend(rec, raw)
	l.tally.count(func(s *Summary) { s.Skipped++ }) // not touched: a partial download of it is not needed
	l.emit(Event{Kind: FileSkipped, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: a.ID})
	return rec
}

// deleted marks an album entry removed or trashed on the server. The local
// copy is kept: quak is an archive, not a mirror.
func (l *lister) deleted(sf *state.File, raw *apiclient.File, a *catalog.Album, c *state.Collection, w *pageWork) {
	if sf == nil || sf.Entries[c.ID] == nil {
		return
	}
	l.seen.mu.Lock()
	l.seen.goneNow[entryKey{sf.ID, c.ID}] = true
	l.seen.mu.Unlock()
	if sf.Entries[c.ID].Deleted {
		return
	}
	rec := record(&catalog.Item{FileID: sf.ID, OwnerID: sf.OwnerID}, sf)
	e := rec.Entries[c.ID]
	e.Deleted = true
	l.tally.count(func(s *Summary) { s.DeletedOnServer++ })
	l.emit(Event{Kind: DeletedOnServer, Album: a.Name, Title: e.Meta.Title, FileID: sf.ID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, e.Name)})
	w.add(stamp(rec, c.ID, raw.UpdationTime))
}
