package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

// placer brings new content into the backup: each file downloaded and
// verified in the temp area, then given its names in its album folder with
// its sidecar, and its copies in other albums refreshed.
type placer struct {
	*job
	fetcher *download.Fetcher
	// save downloads and places one file (pretend in a dry run).
	save    func(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error)
	resumes *resumer
	mu      sync.Mutex
	// expected holds the hashes of files being downloaded, to recognise
	// one a killed run left at its final name; restoring, the saved files
	// downloaded again because they were missing or changed on disk;
	// adopt, per album, the names an `ente export` gave each file id.
	expected  map[int64]string
	restoring map[int64]bool
	adopt     map[int64]map[int64][]string
}

// fetchAll downloads the jobs of one page, at most workers at once, and
// adds each record; a download whose error stops the run cancels it.
func (p *placer) fetchAll(ctx context.Context, cancel context.CancelCauseFunc, a *catalog.Album, c *state.Collection,
	jobs []*catalog.Item, prev map[int64]*state.File, names map[int64][]string, add func(*state.File)) {
	sem := make(chan struct{}, p.workers())
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
			rec, err := p.save(ctx, it, prev[it.FileID], a, c, names[it.FileID])
			if err != nil {
				cancel(err)
				return
			}
			add(stamp(rec, c.ID, it.Raw.UpdationTime))
		}(it)
	}
	wg.Wait()
}

// workers is how many downloads of a page may be under way at once: the
// limiter's cap, which it gates.
func (p *placer) workers() int {
	if p.fetcher == nil || p.fetcher.Pace == nil {
		return max(p.o.Concurrency, 1)
	}
	return p.fetcher.Pace.Max()
}

// download fetches, verifies and places a file, then refreshes its copies
// in other albums. Only errors that stop the run are returned; a failed file
// comes back as a Failed record.
func (p *placer) download(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
	old := p.previous(sf, c, it)
	failed := func(err error) (*state.File, error) {
		if err := p.diskError(err); fatal(ctx, err) {
			return nil, err
		}
		p.release(c, named, old) // a name this try took is free for the next
		return p.fail(sf, it.Raw, a, it.Meta.Title, err), nil
	}
	if _, err := p.albumDir(c); err != nil {
		return failed(err)
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
		return failed(err)
	}
	rec := record(it, sf)
	names, mismatch, err := p.place(got, it, rec, c, old, named)
	if err != nil {
		return failed(err)
	}
	rec.Entries[c.ID].Sidecars = p.dropOld(c, old, it.FileID, names)
	if old != nil {
		rec.Entries[c.ID].SidecarHashes = ownHashes(old.SidecarHashes, rec.Entries[c.ID].Sidecars)
	}
	p.relinkOthers(rec, c)
	p.tellSaved(it, a, c, filepath.Join(c.Folder, names[0]), got.Size, mismatch)
	return rec, nil
}

// tellSaved counts and tells a file downloaded and placed at path.
func (p *placer) tellSaved(it *catalog.Item, a *catalog.Album, c *state.Collection, path string, size int64, mismatch bool) {
	p.mu.Lock()
	restored := p.restoring[it.FileID]
	p.mu.Unlock()
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
	p.emit(e)
	e.Bytes = 0
	if mismatch {
		e.Kind = HashMismatch
		p.emit(e)
	}
	if restored {
		e.Kind = LocalRestored
		p.emit(e)
	}
}

// place gives a downloaded file its final name(s) in the album folder and
// records them in rec, writing the sidecar first: a file at a final name
// always has the sidecar that says it is this file's, so a run killed in
// between is recognised, not saved a second time as _1. A live photo is
// unzipped into its two parts, each checked against its hash.
func (p *placer) place(got *download.Partial, it *catalog.Item, rec *state.File, c *state.Collection, old *state.Entry,
	named []string) (names []string, mismatch bool, err error) {
	dir, err := p.albumDir(c)
	if err != nil {
		got.Discard()
		return nil, false, err
	}
	before := func(names []string, local string, mismatch bool) error {
		rec.Header, rec.Size, rec.Meta, rec.Error, rec.Pending, rec.PendingAlso = keys.EncodeB64(it.Header), it.Size, it.Meta, "", nil, nil
		rec.LocalHash, rec.Status = local, state.Saved
		if mismatch {
			rec.Status = state.HashMismatch
		}
		rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
		return p.views.writeSidecar(rec, c, old)
	}
	if catalog.IsLivePhoto(it.Meta) {
		return p.placeLive(got, it, c, old, dir, before)
	}
	if named == nil {
		named = p.entryNames(c, old, it.FileID, it.Meta.Title, []string{""})
	}
	names = []string{named[0]}
	if err := before(names, keys.EncodeB64(got.Hash), got.HashMismatch); err != nil {
		got.Discard()
		return nil, false, err
	}
	if err := got.Commit(filepath.Join(dir, names[0]), p.o.FileMode, micros(it.Meta.CreationTime)); err != nil {
		return nil, false, err
	}
	p.disk.changed(dir)
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
		p.emit(Event{Kind: FileWarning, Album: c.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Err: fmt.Errorf("live photo: %s", an)})
	}
	parts, exts, local, mismatch := liveParts(res, it.Meta.Hash)
	names = p.entryNames(c, old, it.FileID, it.Meta.Title, exts)
	if err := before(names, local, mismatch); err != nil {
		res.Remove()
		return nil, false, err
	}
	for i, part := range parts {
		if err := part.Commit(filepath.Join(dir, names[i]), p.o.FileMode, micros(it.Meta.CreationTime)); err != nil {
			res.Remove()
			return nil, false, err
		}
		p.disk.changed(dir)
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

// previous is the entry a download replaces in c: the file's own, or the
// names an adopted `ente export` sidecar gave it (a damaged copy is replaced
// in place, not kept beside the good one).
func (p *placer) previous(sf *state.File, c *state.Collection, it *catalog.Item) *state.Entry {
	if sf != nil && sf.Entries[c.ID] != nil {
		return sf.Entries[c.ID]
	}
	p.mu.Lock()
	names := p.adopt[c.ID][it.FileID]
	p.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	return &state.Entry{Name: names[0], Parts: names, Meta: state.Meta{Title: it.Meta.Title}}
}

// entryNames names a file's parts in an album folder: the old names when
// the title is unchanged, else fresh unique ones. exts are the parts'
// extensions ("" for a single file named exactly by its title).
func (p *placer) entryNames(c *state.Collection, old *state.Entry, fileID int64, title string, exts []string) []string {
	if old != nil && old.Meta.Title == title && len(old.Parts) == len(exts) && sameExts(old.Parts, exts) {
		return old.Parts
	}
	stem := title
	if len(exts) > 1 || exts[0] != "" {
		stem = strings.TrimSuffix(title, filepath.Ext(title))
	}
	dir, _ := layout.Join(p.dir, c.Folder)
	out := make([]string, len(exts))
	p.names.inAlbum(c.ID, func(n *layout.Namer) {
		for i, ext := range exts {
			out[i] = n.UniqueFree(layout.SanitizeFile(stem+ext, "file"+ext), func(name string) bool {
				sidecar := name
				if i > 0 {
					sidecar = out[0]
				}
				path := filepath.Join(dir, name)
				if i == 0 && !metaOwnedBy(filepath.Join(dir, ".meta", name+".json"), fileID) {
					return false // another file's `ente export` sidecar has this name
				}
				return !p.disk.exists(path) || leftBy(dir, sidecar, name, fileID) || p.leftover(path, fileID)
			})
		}
	})
	return out
}

// leftBy reports whether name in dir is this file's own, left at its final
// name by a run that stopped before recording it: the sidecar written just
// before the rename names the file's id and this name.
func leftBy(dir, sidecar, name string, fileID int64) bool {
	b, err := os.ReadFile(filepath.Join(dir, ".meta", sidecar+".json"))
	if err != nil {
		return false
	}
	var sc struct {
		Info struct {
			ID        int64    `json:"id"`
			FileNames []string `json:"fileNames"`
		} `json:"info"`
	}
	if json.Unmarshal(b, &sc) != nil || sc.Info.ID != fileID {
		return false
	}
	for _, n := range sc.Info.FileNames {
		if n == name {
			return true
		}
	}
	return false
}

func sameExts(parts, exts []string) bool {
	for i, e := range exts {
		if e != "" && !strings.EqualFold(filepath.Ext(parts[i]), e) {
			return false
		}
	}
	return true
}

// dropOld removes an entry's old parts and the sidecars quak recorded for
// them that the new names no longer use, and returns the recorded sidecars
// left. A part whose name differs from a kept one only in case is the kept
// file itself on a case-insensitive file system, and stays.
func (p *placer) dropOld(c *state.Collection, old *state.Entry, fileID int64, keep []string) []string {
	if old == nil {
		return nil
	}
	dir, err := p.albumDir(c)
	if err != nil {
		return old.Sidecars
	}
	keptName := func(name string) bool {
		for _, k := range keep {
			if strings.EqualFold(k, name) {
				return true
			}
		}
		return false
	}
	own := old.Sidecars
	for _, part := range old.Parts {
		if keptName(part) {
			continue
		}
		p.disk.remove(filepath.Join(dir, part))
		own = p.dropPartSidecars(dir, part, own, old.SidecarHashes)
		p.names.inAlbum(c.ID, func(n *layout.Namer) { n.Release(part) })
	}
	if !keptName(old.Name) {
		p.removeMeta(filepath.Join(dir, ".meta", old.Name+".json"), fileID)
	}
	return own
}

// release frees the names a failed download had taken in c's folder, but
// those of the copy it was to replace.
func (p *placer) release(c *state.Collection, named []string, old *state.Entry) {
	p.names.inAlbum(c.ID, func(n *layout.Namer) {
		for _, name := range named {
			if old == nil || !slices.Contains(old.Parts, name) {
				n.Release(name)
			}
		}
	})
}

// expect notes the hash of a file about to be downloaded, so that a copy
// a killed run left at its final name is recognised (leftover).
func (p *placer) expect(it *catalog.Item) {
	if it.Meta.Hash == "" {
		return
	}
	p.mu.Lock()
	p.expected[it.FileID] = it.Meta.Hash
	p.mu.Unlock()
}

// forget drops the expected hashes of files now recorded.
func (p *placer) forget(files []*state.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range files {
		delete(p.expected, f.ID)
	}
}

// leftover reports whether the file at path holds exactly the bytes of
// file fileID, which this run is downloading: what a run killed between a
// rename and its commit leaves behind, unrecorded. An `ente export`
// sidecar names such a file; with other sidecar styles nothing else does,
// and without this it would be saved a second time as name_1.
func (p *placer) leftover(path string, fileID int64) bool {
	p.mu.Lock()
	want := p.expected[fileID]
	p.mu.Unlock()
	return want != "" && p.disk.holds(path, want)
}
