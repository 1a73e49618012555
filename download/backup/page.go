package backup

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// reserved names in every album folder, and at the top level.
var (
	reservedInAlbum = []string{".meta"}
	reservedTop     = []string{folder.StateDir, DateViewDir}
)

// page handles one page of an album's entries: downloads run concurrently,
// everything else inline. It returns the records to commit, whether every
// entry was saved or recorded as failed, and an error that stops the run.
func (r *run) page(ctx context.Context, a *catalog.Album, c *state.Collection, entries []apiclient.File, cancel context.CancelCauseFunc) ([]*state.File, bool, error) {
	var (
		out   []*state.File
		outMu sync.Mutex
		jobs  []*catalog.Item
		prev  = map[int64]*state.File{}
		bytes int64
	)
	add := func(f *state.File) {
		outMu.Lock()
		defer outMu.Unlock()
		out = append(out, f)
	}
	entries = r.latestOnly(c.ID, entries)
	for i := range entries {
		raw := &entries[i]
		if !raw.IsDeleted {
			r.mu.Lock()
			delete(r.goneNow, entryKey{raw.ID, c.ID}) // an older entry's deletion no longer holds
			r.mu.Unlock()
		}
		sf, err := r.st.File(raw.ID)
		if err != nil {
			return out, false, err
		}
		it, err := catalog.OpenItem(raw, a)
		switch {
		case err != nil:
			add(r.fail(sf, raw, a, "", err))
		case it.Deleted:
			if sf != nil && sf.Entries[c.ID] != nil {
				r.mu.Lock()
				r.goneNow[entryKey{sf.ID, c.ID}] = true
				r.mu.Unlock()
			}
			if rec := r.deleted(sf, a, c); rec != nil {
				add(stamp(rec, c.ID, raw.UpdationTime))
			}
		case r.o.MetadataOnly && (fresh(sf) || sf.Header != keys.EncodeB64(it.Header)):
			continue // media: left for a full run, whose cursor has not moved
		case r.o.MetadataOnly:
			rec, err := r.refresh(it, sf, a, c)
			if err := r.settle(ctx, stamp(rec, c.ID, raw.UpdationTime), err, sf, raw, a, it, add); err != nil {
				return out, false, err
			}
		case fresh(sf) && !r.takeFile(it):
			add(r.skip(sf, raw, a, it))
		case fresh(sf) || sf.Header != keys.EncodeB64(it.Header):
			if rec := r.adoptExisting(it, sf, a, c); rec != nil {
				add(stamp(rec, c.ID, raw.UpdationTime))
				continue
			}
			jobs = append(jobs, it)
			prev[it.FileID] = sf
			bytes += plainSize(it.Size)
		default:
			rec, again, err := r.update(it, sf, a, c)
			if again {
				jobs = append(jobs, it)
				prev[it.FileID] = sf
				bytes += plainSize(it.Size)
				continue
			}
			if err := r.settle(ctx, stamp(rec, c.ID, raw.UpdationTime), err, sf, raw, a, it, add); err != nil {
				return out, false, err
			}
		}
	}
	if len(jobs) > 0 {
		r.emit(Event{Kind: Planned, Album: a.Name, Files: len(jobs), Bytes: bytes})
	}
	// Name single files now, in the page's order, so that which of two
	// colliding titles gets the plain name never depends on download timing.
	// (A live photo's part names wait for its zip's extensions.)
	names := map[int64][]string{}
	for _, it := range jobs {
		r.expect(it)
		if !catalog.IsLivePhoto(it.Meta) {
			names[it.FileID] = r.entryNames(c, r.previous(prev[it.FileID], c, it), it.FileID, it.Meta.Title, []string{""})
		}
	}
	sem := make(chan struct{}, r.workers())
	var wg sync.WaitGroup
	for _, it := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(it *catalog.Item) {
			defer wg.Done()
			defer func() { <-sem }()
			if r.dry() {
				add(r.pretend(it, prev[it.FileID], a, c, names[it.FileID]))
				return
			}
			rec, err := r.download(ctx, it, prev[it.FileID], a, c, names[it.FileID])
			if err != nil {
				cancel(err)
				return
			}
			add(stamp(rec, c.ID, it.Raw.UpdationTime))
		}(it)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return out, false, context.Cause(ctx)
	}
	return out, true, nil
}

// latestOnly keeps, of the entries a listing carries for one file in album
// cid, only the one of the latest updationTime, also across this run's
// earlier pages: a broken or hostile server may list a file twice, and an
// older entry is never applied after a newer one, nor saved a second time.
// Of two entries of the same time, a live one wins over a deletion.
func (r *run) latestOnly(cid int64, entries []apiclient.File) []apiclient.File {
	at := map[int64]int{}
	out := make([]apiclient.File, 0, len(entries))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range entries {
		k := entryKey{e.ID, cid}
		if t, ok := r.listed[k]; ok && (e.UpdationTime < t || (e.UpdationTime == t && e.IsDeleted)) {
			continue
		}
		r.listed[k] = e.UpdationTime
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
func (r *run) fail(sf *state.File, raw *apiclient.File, a *catalog.Album, title string, err error) *state.File {
	rec := record(&catalog.Item{FileID: raw.ID, OwnerID: raw.OwnerID}, sf)
	rec.Status, rec.Error = state.Failed, err.Error()
	pend(rec, raw)
	reason := Reason(err)
	r.mu.Lock()
	r.sum.Failed++
	r.sum.Failures = append(r.sum.Failures, folder.Failure{FileID: raw.ID, Album: a.Name, Title: title, Reason: reason, Error: err.Error()})
	r.sum.Reasons[reason]++
	r.touched[raw.ID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileFailed, Album: a.Name, Title: title, FileID: raw.ID, CollectionID: a.ID, Err: err})
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
func (r *run) settle(ctx context.Context, rec *state.File, err error, sf *state.File, raw *apiclient.File, a *catalog.Album,
	it *catalog.Item, add func(*state.File)) error {
	switch {
	case fatal(ctx, r.diskError(err)):
		return r.diskError(err)
	case err != nil:
		add(r.fail(sf, raw, a, it.Meta.Title, err))
	case rec != nil:
		add(rec)
	}
	return nil
}

// takeFile applies the run's file filters (type, creation time).
func (r *run) takeFile(it *catalog.Item) bool {
	return r.o.Filter.TakeFile(filter.File{FileType: it.Meta.FileType, CreationTime: it.Meta.CreationTime})
}

// skip records a file the filters left out, with its diff entry, so a
// later run with wider filters downloads it without listing again.
func (r *run) skip(sf *state.File, raw *apiclient.File, a *catalog.Album, it *catalog.Item) *state.File {
	rec := record(it, sf)
	rec.Status, rec.Error, rec.Meta = state.Skipped, "", it.Meta
	pend(rec, raw)
	r.mu.Lock()
	r.sum.Skipped++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileSkipped, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: a.ID})
	return rec
}

// deleted marks an album entry removed or trashed on the server. The local
// copy is kept: quak is an archive, not a mirror.
func (r *run) deleted(sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	if sf == nil || sf.Entries[c.ID] == nil || sf.Entries[c.ID].Deleted {
		return nil
	}
	rec := record(&catalog.Item{FileID: sf.ID, OwnerID: sf.OwnerID}, sf)
	e := rec.Entries[c.ID]
	e.Deleted = true
	r.mu.Lock()
	r.sum.DeletedOnServer++
	r.mu.Unlock()
	r.emit(Event{Kind: DeletedOnServer, Album: a.Name, Title: e.Meta.Title, FileID: sf.ID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, e.Name)})
	return rec
}
