package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// download fetches, verifies and places a file, then refreshes its copies
// in other albums. Only errors that stop the run are returned; a failed file
// comes back as a Failed record.
func (r *run) download(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
	rec := record(it, sf)
	// failed records the file as failed, unless the error stops the run.
	failed := func(err error) (*state.File, error) {
		if err := r.diskError(err); fatal(ctx, err) {
			return nil, err
		}
		return r.fail(sf, it.Raw, a, it.Meta.Title, err), nil
	}
	if _, err := r.albumDir(c); err != nil {
		return failed(err)
	}
	live := catalog.IsLivePhoto(it.Meta)
	t := download.Target{FileID: it.FileID, Key: it.Key, Header: it.Header, Size: it.Size, Hash: it.Meta.Hash,
		Resume: r.resumeFor(it.FileID)}
	if live {
		t.Hash = "" // checked per part after unzipping
	}
	p, err := r.fetcher.Fetch(ctx, t, r.tmp)
	if uerr := r.down.observe(ctx, err); uerr != nil {
		return nil, uerr
	}
	if err != nil {
		return failed(err)
	}
	size := p.Size
	old := r.previous(sf, c, it)
	// The sidecar is written before the file takes its name: a file at a
	// final name always has the sidecar that says it is this file's, so a
	// run killed in between is recognised, not saved a second time as _1.
	sidecarFirst := func(names []string, local string, mismatch bool) error {
		rec.Header, rec.Size, rec.Meta, rec.Error, rec.Pending, rec.PendingAlso = keys.EncodeB64(it.Header), it.Size, it.Meta, "", nil, nil
		rec.LocalHash = local
		rec.Status = state.Saved
		if mismatch {
			rec.Status = state.HashMismatch
		}
		rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
		return r.writeSidecar(rec, c, old)
	}
	names, _, mismatch, err := r.place(p, it, c, old, live, named, sidecarFirst)
	if err != nil {
		return failed(err)
	}
	rec.Entries[c.ID].Sidecars = r.dropOld(c, old, it.FileID, names)
	if old != nil {
		rec.Entries[c.ID].SidecarHashes = ownHashes(old.SidecarHashes, rec.Entries[c.ID].Sidecars)
	}
	for cid, e := range rec.Entries {
		if cid != c.ID && !e.Deleted {
			if err := r.relink(rec, c, cid); err != nil {
				r.relinkFailed(rec, cid, err)
			}
		}
	}
	r.mu.Lock()
	restored := r.restoring[it.FileID]
	if restored {
		r.sum.LocalRestored++
	} else {
		r.sum.New++
	}
	r.sum.Bytes += size
	r.touched[it.FileID] = true
	if mismatch {
		r.sum.HashMismatches++
	}
	r.mu.Unlock()
	path := filepath.Join(c.Folder, names[0])
	r.emit(Event{Kind: FileSaved, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID, Path: path, Bytes: size})
	if mismatch {
		r.emit(Event{Kind: HashMismatch, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID, Path: path})
	}
	if restored {
		r.emit(Event{Kind: LocalRestored, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID, Path: path})
	}
	return rec, nil
}

// place gives a downloaded file its final name(s) in the album folder. A
// live photo is unzipped into its two parts, each checked against its hash.
// local is the hash of what was written, in Meta.Hash's form.
func (r *run) place(p *download.Partial, it *catalog.Item, c *state.Collection, old *state.Entry, live bool, named []string,
	before func(names []string, local string, mismatch bool) error) (names []string, local string, mismatch bool, err error) {
	mtime := micros(it.Meta.CreationTime)
	dir, err := r.albumDir(c)
	if err != nil {
		p.Discard()
		return nil, "", false, err
	}
	if !live {
		if named == nil {
			named = r.entryNames(c, old, it.FileID, it.Meta.Title, []string{""})
		}
		name := named[0]
		if err := before([]string{name}, keys.EncodeB64(p.Hash), p.HashMismatch); err != nil {
			p.Discard()
			return nil, "", false, err
		}
		if err := p.Commit(filepath.Join(dir, name), r.o.FileMode, mtime); err != nil {
			return nil, "", false, err
		}
		r.markDirty(dir)
		return []string{name}, keys.EncodeB64(p.Hash), p.HashMismatch, nil
	}
	res, err := livephoto.Unpack(p.Path(), r.tmp)
	p.Discard()
	if err != nil {
		return nil, "", false, err
	}
	for _, a := range res.Anomalies {
		r.emit(Event{Kind: FileWarning, Album: c.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Err: fmt.Errorf("live photo: %s", a)})
	}
	ih, vh, ok := catalog.SplitLiveHash(it.Meta.Hash)
	var parts []*livephoto.Part
	var exts, hashes []string
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
	names = r.entryNames(c, old, it.FileID, it.Meta.Title, exts)
	local = hashes[0] + ":" + hashes[1%len(hashes)]
	if len(parts) == 1 {
		// Only one part: record which, so verify checks it against its own hash.
		which := "image:"
		if res.Image == nil {
			which = "video:"
		}
		local = which + hashes[0]
	}
	if err := before(names, local, mismatch); err != nil {
		res.Remove()
		return nil, "", false, err
	}
	for i, part := range parts {
		if err := part.Commit(filepath.Join(dir, names[i]), r.o.FileMode, mtime); err != nil {
			res.Remove()
			return nil, "", false, err
		}
		r.markDirty(dir)
	}
	return names, local, mismatch, nil
}

// previous is the entry a download replaces in c: the file's own, or the
// names an adopted `ente export` sidecar gave it (a damaged copy is replaced
// in place, not kept beside the good one).
func (r *run) previous(sf *state.File, c *state.Collection, it *catalog.Item) *state.Entry {
	if sf != nil && sf.Entries[c.ID] != nil {
		return sf.Entries[c.ID]
	}
	r.mu.Lock()
	names := r.adopt[c.ID][it.FileID]
	r.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	return &state.Entry{Name: names[0], Parts: names, Meta: state.Meta{Title: it.Meta.Title}}
}

// entryNames names a file's parts in an album folder: the old names when the
// title is unchanged, else fresh unique ones. exts are the parts' extensions
// ("" for a single file named exactly by its title).
func (r *run) entryNames(c *state.Collection, old *state.Entry, fileID int64, title string, exts []string) []string {
	if old != nil && old.Meta.Title == title && len(old.Parts) == len(exts) && sameExts(old.Parts, exts) {
		return old.Parts
	}
	fallback := "file"
	stem := title
	if len(exts) > 1 || exts[0] != "" {
		stem = strings.TrimSuffix(title, filepath.Ext(title))
	}
	n := r.namer(c)
	dir, _ := r.albumDir(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, len(exts))
	for i, ext := range exts {
		want := layout.SanitizeFile(stem+ext, fallback+ext)
		names[i] = n.UniqueFree(want, func(name string) bool {
			sidecar := name
			if i > 0 {
				sidecar = names[0]
			}
			p := filepath.Join(dir, name)
			if i == 0 && !metaOwnedBy(filepath.Join(dir, ".meta", name+".json"), fileID) {
				return false // another file's `ente export` sidecar has this name
			}
			return !r.exists(p) || leftBy(dir, sidecar, name, fileID) || r.leftoverLocked(p, fileID)
		})
	}
	return names
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
func (r *run) dropOld(c *state.Collection, old *state.Entry, fileID int64, keep []string) []string {
	if old == nil {
		return nil
	}
	dir, err := r.albumDir(c)
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
	n := r.namer(c)
	for _, part := range old.Parts {
		if keptName(part) {
			continue
		}
		r.remove(filepath.Join(dir, part))
		own = r.dropPartSidecars(dir, part, own, old.SidecarHashes)
		r.mu.Lock()
		n.Release(part)
		r.mu.Unlock()
	}
	if !keptName(old.Name) {
		r.removeMeta(filepath.Join(dir, ".meta", old.Name+".json"), fileID)
	}
	return own
}

// removeMeta removes an `ente export` sidecar that describes file id.
func (r *run) removeMeta(path string, id int64) bool {
	if !metaOwnedBy(path, id) {
		return false
	}
	return r.removeIfExists(path)
}

// albumDir is the album's folder, created if needed and checked to be
// inside the backup folder.
func (r *run) albumDir(c *state.Collection) (string, error) {
	dir, err := layout.Join(r.dir, c.Folder)
	if err != nil || r.dry() {
		return dir, err
	}
	return dir, r.mkdirAll(dir)
}

// mkdirAll makes dir and its missing parents, and marks the folder holding
// each one it made for the next commit's fsync: a new folder's name lives
// in its parent, up to the backup folder itself.
func (r *run) mkdirAll(dir string) error { return r.mkdirAllMode(dir, 0o755) }

// mkdirAllMode is mkdirAll for folders of another mode (the trash's 0700).
func (r *run) mkdirAllMode(dir string, mode os.FileMode) error {
	var made []string
	for d := dir; strings.HasPrefix(d, r.dir+string(filepath.Separator)); d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	for _, d := range made {
		r.markDirty(filepath.Dir(d))
	}
	return nil
}

// namer returns the names taken in c's folder, indexing the state on first use.
func (r *run) namer(c *state.Collection) *layout.Namer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.indexed {
		r.indexed = true
		r.indexErr = r.st.Files(func(f *state.File) error {
			for cid, e := range f.Entries {
				r.namerLocked(cid).Take(e.Name)
				for _, p := range e.Parts {
					r.namerLocked(cid).Take(p)
				}
			}
			return nil
		})
	}
	return r.namerLocked(c.ID)
}

func (r *run) namerLocked(cid int64) *layout.Namer {
	n := r.names[cid]
	if n == nil {
		n = layout.NewFileNamer()
		for _, name := range reservedInAlbum {
			n.Take(name)
		}
		r.names[cid] = n
	}
	return n
}

// writeSidecar writes the sidecar of rec's entry in c, removing the one of
// a replaced entry under another name.
func (r *run) writeSidecar(rec *state.File, c *state.Collection, old *state.Entry) error {
	e := rec.Entries[c.ID]
	p, err := layout.Join(r.dir, c.Folder, ".meta", e.Name+".json")
	if err != nil {
		return err
	}
	owned := metaOwnedBy(p, rec.ID)
	switch {
	case r.o.Views.style() != sidecars.Ente:
		if owned {
			r.removeIfExists(p) // another style: no JSON in .meta (an adopted export's goes)
		}
	case !owned:
		return fmt.Errorf("%s is another file's `ente export` sidecar; quak does not replace it", filepath.Join(c.Folder, ".meta", e.Name+".json"))
	default:
		sc := newSidecar(rec, c.ID, c.Name, e.Parts)
		sc.Title = e.Meta.Title
		if err := r.writeJSON(p, sc); err != nil {
			return err
		}
	}
	if old != nil && !strings.EqualFold(old.Name, e.Name) {
		r.removeMeta(filepath.Join(filepath.Dir(p), old.Name+".json"), rec.ID)
	}
	return nil
}
