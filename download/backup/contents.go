package backup

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// What the backup holds, as the run knows it: each file's record (every
// change is made on a copy, record, and committed with its page), the
// albums and their folders (albumSet), the names taken in them (names),
// and the names of an album copy's parts (partNames).

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

// placed fills in rec as the file it now holds: its content, metadata
// and hash, saved (or with a hash that differs), no longer pending.
func placed(rec *state.File, it *catalog.Item, local string, mismatch bool) {
	rec.Header, rec.Size, rec.Meta, rec.Error, rec.Pending, rec.PendingAlso = keys.EncodeB64(it.Header), it.Size, it.Meta, "", nil, nil
	rec.LocalHash, rec.Status = local, state.Saved
	if mismatch {
		rec.Status = state.HashMismatch
	}
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

// failedRecord records a file that could not be saved, and counts it: the run
// goes on, and the next run retries it first.
func failedRecord(t *tally, sf *state.File, raw *apiclient.File, a *catalog.Album, title string, err error) *state.File {
	rec := record(&catalog.Item{FileID: raw.ID, OwnerID: raw.OwnerID}, sf)
	rec.Status, rec.Error = state.Failed, err.Error()
	pend(rec, raw)
	t.failedFile(folder.Failure{FileID: raw.ID, Album: a.Name, Title: title}, a.ID, err)
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

// saved reports a file whose content is saved.
func saved(f *state.File) bool { return f.Status == state.Saved || f.Status == state.HashMismatch }

// albumSet is the run's record of albums: each album's folder under DIR,
// and where a saved copy's parts are. The lister loads it and adds to it
// between pages; every other collaborator only reads it.
type albumSet struct {
	root  string // DIR, absolute
	st    *state.Store
	disk  disk
	colls map[int64]*state.Collection
}

// load reads the albums recorded in the state.
func (s *albumSet) load() error {
	colls, err := s.st.Collections()
	if err != nil {
		return err
	}
	s.colls = colls
	return nil
}

// all are the albums as they stand in this run.
func (s *albumSet) all() map[int64]*state.Collection { return s.colls }

// add records a new album in the run's set.
func (s *albumSet) add(c *state.Collection) { s.colls[c.ID] = c }

// dir is album c's folder, created if needed and checked to be inside the
// backup folder.
func (s *albumSet) dir(c *state.Collection) (string, error) {
	dir, err := layout.Join(s.root, c.Folder)
	if err != nil {
		return dir, err
	}
	return dir, s.disk.MkdirAll(dir, 0o755)
}

// partsExist reports whether every part of entry e is in c's folder.
func (s *albumSet) partsExist(c *state.Collection, e *state.Entry) bool {
	dir, err := s.dir(c)
	if err != nil || len(e.Parts) == 0 {
		return false
	}
	for _, p := range e.Parts {
		if !s.disk.Exists(filepath.Join(dir, p)) {
			return false
		}
	}
	return true
}

// claimed are the paths, relative to DIR, of every part a record keeps
// in an album folder.
func (s *albumSet) claimed() (map[string]bool, error) {
	out := map[string]bool{}
	err := s.st.Briefs(func(b state.Brief) error {
		for _, p := range b.Places {
			if c := s.colls[p.CollectionID]; c != nil {
				for _, part := range p.Parts {
					out[filepath.Join(c.Folder, part)] = true
				}
			}
		}
		return nil
	})
	return out, err
}

// source finds a current saved copy of the file whose parts exist on disk,
// its album and its folder.
func (s *albumSet) source(sf *state.File) (*state.Entry, *state.Collection, string) {
	for cid, e := range sf.Entries {
		c := s.colls[cid]
		if c == nil || e.Stale || !s.partsExist(c, e) {
			continue
		}
		if dir, err := s.dir(c); err == nil {
			return e, c, dir
		}
	}
	return nil, nil, ""
}

// reserved names in every album folder, and at the top level.
var (
	reservedInAlbum = []string{".meta"}
	reservedTop     = []string{folder.StateDir, views.DateViewDir}
)

// names keeps the names taken in the backup folder: album folders at the
// top, and saved files in each album folder, read from the state on first
// use. Safe for concurrent use: every change happens under one lock.
type names struct {
	st      *state.Store
	mu      sync.Mutex
	folders *layout.Namer
	albums  map[int64]*layout.Namer
	indexed bool
}

func newNames(st *state.Store) *names { return &names{st: st, albums: map[int64]*layout.Namer{}} }

// top runs do with the album folders' names, under the lock; the first
// call takes those of colls.
func (n *names) top(colls map[int64]*state.Collection, do func(*layout.Namer)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.folders == nil {
		n.folders = layout.NewNamer()
		for _, name := range reservedTop {
			n.folders.Take(name)
		}
		for _, c := range colls {
			n.folders.Take(c.Folder)
		}
	}
	do(n.folders)
}

// inAlbum runs do with the names taken in album cid's folder, under the
// lock.
func (n *names) inAlbum(cid int64, do func(*layout.Namer)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.indexed {
		n.indexed = true
		_ = n.st.Files(func(f *state.File) error {
			for id, e := range f.Entries {
				n.albumLocked(id).Take(e.Name)
				for _, p := range e.Parts {
					n.albumLocked(id).Take(p)
				}
			}
			return nil
		})
	}
	do(n.albumLocked(cid))
}

func (n *names) albumLocked(cid int64) *layout.Namer {
	nm := n.albums[cid]
	if nm == nil {
		nm = layout.NewFileNamer()
		for _, name := range reservedInAlbum {
			nm.Take(name)
		}
		n.albums[cid] = nm
	}
	return nm
}

// taken reports whether name is a saved file's in album cid's folder: a
// sidecar never replaces one.
func (n *names) taken(cid int64, name string) (taken bool) {
	n.inAlbum(cid, func(nm *layout.Namer) { taken = nm.Taken(name) })
	return taken
}

// partNames names an album copy's parts in its album folder, and drops
// the parts (and their sidecars) of a copy that is replaced or renamed.
type partNames struct {
	root     string // DIR, absolute
	names    *names
	disk     disk
	views    *views.Keeper
	expected *expected
}

// name names a file's parts in album c's folder: the old names when the
// title is unchanged, else fresh unique ones. exts are the parts'
// extensions ("" for a single file named exactly by its title).
func (n *partNames) name(c *state.Collection, old *state.Entry, fileID int64, title string, exts []string) []string {
	if old != nil && old.Meta.Title == title && len(old.Parts) == len(exts) && sameExts(old.Parts, exts) {
		return old.Parts
	}
	stem := title
	if len(exts) > 1 || exts[0] != "" {
		stem = strings.TrimSuffix(title, filepath.Ext(title))
	}
	dir, _ := layout.Join(n.root, c.Folder)
	out := make([]string, len(exts))
	n.names.inAlbum(c.ID, func(nm *layout.Namer) {
		for i, ext := range exts {
			out[i] = nm.UniqueFree(layout.SanitizeFile(stem+ext, "file"+ext), func(name string) bool {
				sidecar := name
				if i > 0 {
					sidecar = out[0]
				}
				path := filepath.Join(dir, name)
				if i == 0 && !n.views.SidecarOwnedBy(filepath.Join(dir, ".meta", name+".json"), fileID) {
					return false // another file's `ente export` sidecar has this name
				}
				return !n.disk.Exists(path) || n.leftBy(dir, sidecar, name, fileID) || n.leftover(path, fileID)
			})
		}
	})
	return out
}

// leftBy reports whether name in dir is this file's own, left at its final
// name by a run that stopped before recording it: the sidecar written just
// before the rename names the file's id and this name.
func (n *partNames) leftBy(dir, sidecar, name string, fileID int64) bool {
	id, names := n.views.SidecarOf(filepath.Join(dir, ".meta", sidecar+".json"))
	return id == fileID && slices.Contains(names, name)
}

// leftover reports whether the file at path holds exactly the bytes of
// file fileID, which this run is downloading: what a run killed between a
// rename and its commit leaves behind, unrecorded. An `ente export`
// sidecar names such a file; with other sidecar styles nothing else does,
// and without this it would be saved a second time as name_1.
func (n *partNames) leftover(path string, fileID int64) bool {
	want := n.expected.hash(fileID)
	return want != "" && n.disk.Holds(path, want)
}

func sameExts(parts, exts []string) bool {
	for i, e := range exts {
		if e != "" && !strings.EqualFold(filepath.Ext(parts[i]), e) {
			return false
		}
	}
	return true
}

// partExts are the extensions name wants for a file's parts: none for a
// single file (named by its title), each part's own for a live photo.
func partExts(parts []string) []string {
	if len(parts) < 2 {
		return []string{""}
	}
	exts := make([]string, len(parts))
	for i, p := range parts {
		exts[i] = filepath.Ext(p)
	}
	return exts
}

// release frees the names a failed download had taken in c's folder, but
// those of the copy it was to replace.
func (n *partNames) release(c *state.Collection, named []string, old *state.Entry) {
	n.names.inAlbum(c.ID, func(nm *layout.Namer) {
		for _, name := range named {
			if old == nil || !slices.Contains(old.Parts, name) {
				nm.Release(name)
			}
		}
	})
}

// dropOld removes, from album folder dir of c, an entry's old parts and
// the sidecars quak recorded for them that the new names (keep) no longer
// use, and returns the recorded sidecars left with their hashes. A part
// whose name differs from a kept one only in case is the kept file itself
// on a case-insensitive file system, and stays.
func (n *partNames) dropOld(c *state.Collection, dir string, old *state.Entry, fileID int64, keep []string) ([]string, map[string]string) {
	if old == nil {
		return nil, nil
	}
	keptName := func(name string) bool {
		return slices.ContainsFunc(keep, func(k string) bool { return strings.EqualFold(k, name) })
	}
	own := old.Sidecars
	for _, part := range old.Parts {
		if keptName(part) {
			continue
		}
		n.disk.Remove(filepath.Join(dir, part))
		own = n.views.DropPartSidecars(dir, part, own, old.SidecarHashes)
		n.names.inAlbum(c.ID, func(nm *layout.Namer) { nm.Release(part) })
	}
	if !keptName(old.Name) {
		n.views.RemoveSidecar(dir, old.Name, fileID)
	}
	return own, ownHashes(old.SidecarHashes, own)
}

// ownHashes are the hashes of h whose names are in own.
func ownHashes(h map[string]string, own []string) map[string]string {
	var out map[string]string
	for _, n := range own {
		if v, ok := h[n]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[n] = v
		}
	}
	return out
}

// expected holds the hashes of the files being downloaded, to recognise
// one a killed run left at its final name (partNames.leftover), until
// their records are committed. Safe for concurrent use.
type expected struct {
	mu     sync.Mutex
	hashes map[int64]string
}

// expect notes the hash of file id, about to be downloaded.
func (x *expected) expect(id int64, hash string) {
	if hash == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.hashes == nil {
		x.hashes = map[int64]string{}
	}
	x.hashes[id] = hash
}

// hash is the hash expected of file id ("" when none is).
func (x *expected) hash(id int64) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.hashes[id]
}

// forget drops the expected hashes of files now recorded.
func (x *expected) forget(files []*state.File) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, f := range files {
		delete(x.hashes, f.ID)
	}
}

// micros turns Ente's µs timestamps into time.
func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }
