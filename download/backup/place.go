package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

// placer brings new content into the backup: each file downloaded and
// verified in the temp area, then given its names in its album folder with
// its sidecar, and its copies in other albums refreshed.
type placer struct {
	fetcher *download.Fetcher
	tmp     string      // DIR/.quak/tmp
	mode    os.FileMode // of saved files
	shown   string      // DIR as the run was given it
	albums  *albumSet
	names   *partNames
	disk    disk
	views   *views.Keeper
	relink  *relinker
	adopt   *adopter
	resumes *resumer
	down    *outage
	tally   *tally
	// restoring are the saved files downloaded again because they were
	// missing or changed on disk; read only once downloads start.
	restoring map[int64]bool
}

// download fetches, verifies and places a file, then refreshes its copies
// in other albums. Only errors that stop the run are returned; a failed file
// comes back as a Failed record.
func (p *placer) download(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
	old := p.adopt.previous(sf, c, it)
	fail := func(err error) (*state.File, error) {
		if err := diskError(p.shown, err); fatal(ctx, err) {
			return nil, err
		}
		p.names.release(c, named, old) // a name this try took is free for the next
		return failedRecord(p.tally, sf, it.Raw, a, it.Meta.Title, err), nil
	}
	dir, err := p.albums.dir(c)
	if err != nil {
		return fail(err)
	}
	t := download.Target{FileID: it.FileID, Key: it.Key, Header: it.Header, Size: it.Size, Hash: it.Meta.Hash,
		Resume: p.resumes.pointFor(it.FileID)}
	if catalog.IsLivePhoto(it.Meta) {
		t.Hash = "" // checked per part after unzipping
	}
	got, err := p.fetcher.Fetch(ctx, t, p.tmp)
	if uerr := p.down.observe(ctx, err); uerr != nil {
		return nil, uerr
	}
	if err != nil {
		return fail(err)
	}
	rec := record(it, sf)
	names, mismatch, err := p.place(got, it, rec, c, dir, old, named)
	if err != nil {
		return fail(err)
	}
	e := rec.Entries[c.ID]
	e.Sidecars, e.SidecarHashes = p.names.dropOld(c, dir, old, it.FileID, names)
	p.relink.others(rec, c)
	p.tellSaved(it, a, c, filepath.Join(c.Folder, names[0]), got.Size, mismatch)
	return rec, nil
}

// tellSaved counts and tells a file downloaded and placed at path.
func (p *placer) tellSaved(it *catalog.Item, a *catalog.Album, c *state.Collection, path string, size int64, mismatch bool) {
	restored := p.restoring[it.FileID]
	p.tally.forgive(it.FileID)
	p.tally.did(it.FileID, func(s *Summary) {
		if restored {
			s.LocalRestored++
		} else {
			s.New++
		}
		s.Bytes += size
		if mismatch {
			s.HashMismatches++
		}
	})
	e := Event{Kind: FileSaved, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID, Path: path, Bytes: size}
	p.tally.emit(e)
	e.Bytes = 0
	if mismatch {
		e.Kind = HashMismatch
		p.tally.emit(e)
	}
	if restored {
		e.Kind = LocalRestored
		p.tally.emit(e)
	}
}

// place gives a downloaded file its final name(s) in the album folder and
// records them in rec, writing the sidecar first: a file at a final name
// always has the sidecar that says it is this file's, so a run killed in
// between is recognised, not saved a second time as _1. A live photo is
// unzipped into its two parts, each checked against its hash.
func (p *placer) place(got *download.Partial, it *catalog.Item, rec *state.File, c *state.Collection, dir string, old *state.Entry,
	named []string) (names []string, mismatch bool, err error) {
	before := func(names []string, local string, mismatch bool) error {
		placed(rec, it, local, mismatch)
		rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
		return p.views.WriteSidecar(rec, c, old)
	}
	if catalog.IsLivePhoto(it.Meta) {
		return p.placeLive(got, it, c, old, dir, before)
	}
	if named == nil {
		named = p.names.name(c, old, it.FileID, it.Meta.Title, []string{""})
	}
	names = []string{named[0]}
	if err := before(names, keys.EncodeB64(got.Hash), got.HashMismatch); err != nil {
		got.Discard()
		return nil, false, err
	}
	if err := got.Commit(filepath.Join(dir, names[0]), p.mode, micros(it.Meta.CreationTime)); err != nil {
		return nil, false, err
	}
	p.disk.Changed(dir)
	return names, got.HashMismatch, nil
}

// placeLive unzips a live photo into its parts, names them from their
// extensions, and gives them their names after before has written the
// sidecar.
func (p *placer) placeLive(got *download.Partial, it *catalog.Item, c *state.Collection, old *state.Entry, dir string,
	before func(names []string, local string, mismatch bool) error) (names []string, mismatch bool, err error) {
	res, err := livephoto.Unpack(got.Path(), p.tmp)
	got.Discard()
	if err != nil {
		return nil, false, err
	}
	for _, an := range res.Anomalies {
		p.tally.emit(Event{Kind: FileWarning, Album: c.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Err: fmt.Errorf("live photo: %s", an)})
	}
	parts, exts, local, mismatch := liveParts(res, it.Meta.Hash)
	names = p.names.name(c, old, it.FileID, it.Meta.Title, exts)
	if err := before(names, local, mismatch); err != nil {
		res.Remove()
		return nil, false, err
	}
	for i, part := range parts {
		if err := part.Commit(filepath.Join(dir, names[i]), p.mode, micros(it.Meta.CreationTime)); err != nil {
			res.Remove()
			return nil, false, err
		}
		p.disk.Changed(dir)
	}
	return names, mismatch, nil
}

// liveParts are a live photo's unpacked parts, their extensions, their
// local hash in Meta.Hash's form (a lone part says which it is, so verify
// checks it against its own hash), and whether one differs from want.
func liveParts(res *livephoto.Result, want string) (parts []*livephoto.Part, exts []string, local string, mismatch bool) {
	ih, vh, ok := catalog.SplitLiveHash(want)
	var hashes []string
	for _, pp := range []struct {
		part *livephoto.Part
		want string
	}{{res.Image, ih}, {res.Video, vh}} {
		if pp.part == nil {
			continue
		}
		parts = append(parts, pp.part)
		exts = append(exts, pp.part.Ext)
		hashes = append(hashes, keys.EncodeB64(pp.part.Hash))
		mismatch = mismatch || (ok && !livephoto.HashMatches(pp.want, pp.part.Hash))
	}
	local = hashes[0] + ":" + hashes[1%len(hashes)]
	if len(parts) == 1 {
		which := "image:"
		if res.Image == nil {
			which = "video:"
		}
		local = which + hashes[0]
	}
	return parts, exts, local, mismatch
}

// pretender is a dry run's download, noting on its disk what it would
// place: the file is named and recorded as a real run would, without a
// byte fetched. A live photo's parts are named from its title (the real
// names come from its archive).
type pretender struct {
	disk   *dryDisk
	albums *albumSet
	names  *partNames
	adopt  *adopter
	tally  *tally
}

// pretend stands for placer.download.
func (p *pretender) pretend(_ context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
	old := p.adopt.previous(sf, c, it)
	names := named
	if catalog.IsLivePhoto(it.Meta) {
		names = p.names.name(c, old, it.FileID, it.Meta.Title, []string{strings.ToLower(filepath.Ext(it.Meta.Title)), ".mov"})
	} else if names == nil {
		names = p.names.name(c, old, it.FileID, it.Meta.Title, []string{""})
	}
	dir, _ := p.albums.dir(c)
	for _, n := range names {
		p.disk.note(filepath.Join(dir, n), true)
	}
	rec := record(it, sf)
	placed(rec, it, it.Meta.Hash, false)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	size := plainSize(it.Size)
	p.tally.did(it.FileID, func(s *Summary) {
		s.New++
		s.Bytes += size
	})
	p.tally.emit(Event{Kind: FileSaved, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0]), Bytes: size})
	return rec, nil
}

// resumer keeps where large downloads stand, so that a later run takes
// them up after a crash or a dead link.
type resumer struct {
	st     *state.Store
	tmp    string
	mu     sync.Mutex
	points map[int64]*download.ResumePoint
}

// loadResumer reads where earlier runs left large downloads.
func loadResumer(st *state.Store, tmp string) (*resumer, error) {
	raw, err := st.Resumes()
	if err != nil {
		return nil, err
	}
	r := &resumer{st: st, tmp: tmp, points: map[int64]*download.ResumePoint{}}
	for id, b := range raw {
		rp := &download.ResumePoint{}
		if json.Unmarshal(b, rp) == nil {
			r.points[id] = rp
		}
	}
	return r, nil
}

// temps are the temp files, and their side files, of the downloads a
// later run takes up.
func (r *resumer) temps() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := map[string]bool{}
	for _, rp := range r.points {
		keep[rp.Temp] = true
		for _, p := range download.SideFiles(rp.Temp) {
			keep[p] = true
		}
	}
	return keep
}

// pointFor is the resume point of a file about to be downloaded, if any.
func (r *resumer) pointFor(fileID int64) *download.ResumePoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.points[fileID]
}

// save records (or, with nil, forgets) a download's resume point.
func (r *resumer) save(fileID int64, rp *download.ResumePoint) {
	r.mu.Lock()
	if rp == nil {
		delete(r.points, fileID)
	} else {
		r.points[fileID] = rp
	}
	r.mu.Unlock()
	var v any
	if rp != nil {
		v = rp
	}
	_ = r.st.PutResume(fileID, v) // a lost point costs a restart, not a file
}

// dropStale removes, after a complete run, the partial downloads of files
// the run no longer needed (saved another way, deleted, filtered): those
// of the files it did not touch.
func (r *resumer) dropStale(touched func(int64) bool) {
	r.mu.Lock()
	var stale []int64
	for id, rp := range r.points {
		if !touched(id) {
			stale = append(stale, id)
			if download.InTempDir(r.tmp, rp.Temp) { // a path elsewhere is never quak's to remove
				for _, p := range append(download.SideFiles(rp.Temp), rp.Temp) {
					_ = os.Remove(p)
				}
			}
		}
	}
	r.mu.Unlock()
	for _, id := range stale {
		r.save(id, nil)
	}
}
