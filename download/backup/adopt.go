package backup

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

// adopter recognises what the backup folder already holds, so it is not
// downloaded again: an album folder that an `ente export` made is adopted
// and the files its sidecars name are checked against their hashes; and
// bytes no record claims (an export's under other names or in other
// folders, a folder restored from one) are found by size, then by Ente's
// hash. Nothing is adopted unless its hash matches exactly.
type adopter struct {
	root   string // DIR, absolute
	albums *albumSet
	names  *names
	parts  *partNames
	disk   disk
	views  *views.Keeper
	local  *localFiles
	tally  *tally
	mu     sync.Mutex
	// found holds, per album, the names an `ente export` gave each file id.
	found map[int64]map[int64][]string
}

// scanExport reads the sidecars of an adopted folder, so the files they
// describe can be checked instead of downloaded again.
func (ad *adopter) scanExport(c *state.Collection) error {
	meta, err := layout.Join(ad.root, c.Folder, ".meta")
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
		if id, names := ad.exportNames(filepath.Join(meta, e.Name())); id != 0 {
			found[id] = names
		}
	}
	ad.mu.Lock()
	if ad.found == nil {
		ad.found = map[int64]map[int64][]string{}
	}
	ad.found[c.ID] = found
	ad.mu.Unlock()
	return nil
}

// exportNames reads an `ente export` sidecar: the file id and the names it
// gives the file's parts, or 0 when it names none or a name would leave
// the folder.
func (ad *adopter) exportNames(path string) (int64, []string) {
	id, names := ad.views.SidecarOf(path)
	if id == 0 || len(names) == 0 {
		return 0, nil
	}
	for _, n := range names {
		if layout.Sanitize(n, "") != n { // names that would leave the folder are ignored
			return 0, nil
		}
	}
	return id, names
}

// folderAlbum reports whether folder exists under DIR and, if it has an
// `ente export` album_meta.json, the album id it names (0 otherwise).
func (ad *adopter) folderAlbum(name string) (id int64, exists bool) {
	dir, err := layout.Join(ad.root, name)
	if err != nil {
		return 0, true
	}
	if _, err := os.Stat(dir); err != nil {
		return 0, false
	}
	return ad.views.AlbumOf(dir), true
}

// previous is the entry a download replaces in c: the file's own, or the
// names an adopted `ente export` sidecar gave it (a damaged copy is replaced
// in place, not kept beside the good one).
func (ad *adopter) previous(sf *state.File, c *state.Collection, it *catalog.Item) *state.Entry {
	if sf != nil && sf.Entries[c.ID] != nil {
		return sf.Entries[c.ID]
	}
	ad.mu.Lock()
	names := ad.found[c.ID][it.FileID]
	ad.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	return &state.Entry{Name: names[0], Parts: names, Meta: catalog.Meta{Title: it.Meta.Title}}
}

// adoptExisting recognises a file that an `ente export` already saved in an
// adopted folder: when its bytes match the metadata hash it is recorded as
// saved, without a download.
func (ad *adopter) adoptExisting(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	ad.mu.Lock()
	names := ad.found[c.ID][it.FileID]
	ad.mu.Unlock()
	if sf != nil || len(names) == 0 || it.Meta.Hash == "" {
		return nil
	}
	dir, err := ad.albums.dir(c)
	if err != nil || !exportHolds(dir, names, it.Meta) {
		return nil
	}
	rec := record(it, sf)
	placed(rec, it, it.Meta.Hash, false)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	ad.names.inAlbum(c.ID, func(n *layout.Namer) {
		for _, name := range names {
			n.Take(name)
		}
	})
	ad.tally.did(it.FileID, func(s *Summary) { s.Adopted++ })
	if err := ad.views.WriteSidecar(rec, c, nil); err != nil {
		return nil
	}
	ad.tally.emit(Event{Kind: FileAdopted, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec
}

// exportHolds reports whether the files names in dir hash to what m says:
// one file, or a live photo's two parts.
func exportHolds(dir string, names []string, m catalog.Meta) bool {
	want := []string{m.Hash}
	if catalog.IsLivePhoto(m) {
		ih, vh, ok := catalog.SplitLiveHash(m.Hash)
		if !ok {
			return false
		}
		want = []string{ih, vh}
	}
	if len(names) != len(want) {
		return false
	}
	for i, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return false // a link is never taken for a saved file
		}
		h, err := download.HashFile(p)
		if err != nil || !livephoto.HashMatches(want[i], h) {
			return false
		}
	}
	return true
}

// adoptContent recognises a file this run would download whose bytes the
// backup folder already holds, claimed by no record: it is recorded as
// saved from them, in place when they are in its album folder already,
// else linked there (copied where links are impossible) under the name
// it would have got, its sidecar first. It returns nil when nothing
// matches exactly (the caller downloads the file).
func (ad *adopter) adoptContent(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	if !fresh(sf) || it.Meta.Hash == "" {
		return nil
	}
	found := ad.local.find(ctx, it)
	if found == nil {
		return nil
	}
	dir, err := ad.albums.dir(c)
	if err != nil {
		return nil
	}
	names, inPlace := ad.inPlace(c, found)
	if !inPlace {
		exts := []string{""}
		if len(found) > 1 {
			exts = []string{filepath.Ext(found[0]), filepath.Ext(found[1])}
		}
		names = ad.parts.name(c, nil, it.FileID, it.Meta.Title, exts)
	}
	rec := record(it, sf)
	placed(rec, it, it.Meta.Hash, false)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	if err := ad.views.WriteSidecar(rec, c, nil); err != nil {
		ad.parts.release(c, names, nil)
		return nil
	}
	if !inPlace {
		for i, rel := range found {
			if _, err := ad.disk.LinkOrCopy(filepath.Join(ad.root, rel), filepath.Join(dir, names[i])); err != nil {
				ad.parts.release(c, names, nil)
				return nil // downloaded instead
			}
		}
	}
	ad.local.claim(found)
	ad.tally.did(it.FileID, func(s *Summary) { s.Adopted++ })
	ad.tally.emit(Event{Kind: FileAdopted, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec
}

// inPlace takes the names of found (paths relative to DIR) in album c's
// folder when every one of them is there and free, and reports whether
// they were.
func (ad *adopter) inPlace(c *state.Collection, found []string) ([]string, bool) {
	names := make([]string, len(found))
	for i, rel := range found {
		if filepath.Dir(rel) != filepath.Clean(c.Folder) {
			return nil, false
		}
		names[i] = filepath.Base(rel)
	}
	free := true
	ad.names.inAlbum(c.ID, func(n *layout.Namer) {
		for _, name := range names {
			free = free && !n.Taken(name)
		}
		if free {
			for _, name := range names {
				n.Take(name)
			}
		}
	})
	return names, free
}

// localFiles are the regular files of the backup folder that no record
// claims, found by one walk a run, the first time a file is to be
// downloaded. A file is hashed only when its size is a wanted one (or,
// for a live photo's parts, it shares its name's stem with another file of
// its folder), at most once: its hash is kept in the state with its size
// and time, and a later run hashes it again only when those changed.
type localFiles struct {
	root    string // DIR, absolute
	st      *state.Store
	claimed func() (map[string]bool, error) // the paths, relative to DIR, records claim
	once    sync.Once
	mu      sync.Mutex
	bySize  map[int64][]string
	byStem  map[string][]string // "folder/stem" → files, for live photos' parts
	taken   map[string]bool     // adopted this run
}

// find returns the paths (relative to DIR) of unclaimed files holding
// its content: one file, or a live photo's image and video; nil when
// none does.
func (l *localFiles) find(ctx context.Context, it *catalog.Item) []string {
	l.once.Do(func() { l.walk(ctx) })
	if !catalog.IsLivePhoto(it.Meta) {
		if it.Size < 0 {
			return nil
		}
		for _, rel := range l.candidates(l.bySize[plainSize(it.Size)]) {
			if l.holds(ctx, rel, it.Meta.Hash) {
				return []string{rel}
			}
		}
		return nil
	}
	ih, vh, ok := catalog.SplitLiveHash(it.Meta.Hash)
	if !ok {
		return nil
	}
	for _, stem := range slices.Sorted(maps.Keys(l.byStem)) {
		group := l.candidates(l.byStem[stem])
		for _, img := range group {
			if !l.holds(ctx, img, ih) {
				continue
			}
			for _, vid := range group {
				if vid != img && l.holds(ctx, vid, vh) {
					return []string{img, vid}
				}
			}
		}
	}
	return nil
}

// candidates are the paths not adopted yet this run.
func (l *localFiles) candidates(paths []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range paths {
		if !l.taken[p] {
			out = append(out, p)
		}
	}
	return out
}

// claim notes paths adopted: they are no one else's.
func (l *localFiles) claim(paths []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range paths {
		l.taken[p] = true
	}
}

// walk indexes the unclaimed regular files under DIR by size and stem,
// leaving out quak's own folder, the date view and every .meta folder. A
// folder that cannot be read is left out.
func (l *localFiles) walk(ctx context.Context) {
	l.bySize, l.byStem, l.taken = map[int64][]string{}, map[string][]string{}, map[string]bool{}
	claimed, err := l.claimed()
	if err != nil {
		return
	}
	_ = filepath.WalkDir(l.root, func(p string, d os.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, rerr := filepath.Rel(l.root, p)
		switch {
		case err != nil || rerr != nil:
			return nil //nolint:nilerr // an unreadable folder holds nothing to adopt
		case d.IsDir() && (rel == folder.StateDir || rel == views.DateViewDir || d.Name() == ".meta"):
			return filepath.SkipDir
		case !d.Type().IsRegular() || claimed[rel]:
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // gone since: nothing to adopt
		}
		l.bySize[fi.Size()] = append(l.bySize[fi.Size()], rel)
		stem := strings.TrimSuffix(rel, filepath.Ext(rel))
		l.byStem[stem] = append(l.byStem[stem], rel)
		return nil
	})
	for stem, group := range l.byStem {
		if len(group) < 2 {
			delete(l.byStem, stem)
		}
	}
}

// holds reports whether the file at rel hashes to want, hashing it only
// when the state has no hash of it at its size and time.
func (l *localFiles) holds(ctx context.Context, rel, want string) bool {
	p := filepath.Join(l.root, rel)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	lf, ok, err := l.st.Local(rel)
	if err != nil {
		return false
	}
	if !ok || lf.Size != fi.Size() || lf.MTime != fi.ModTime().UnixNano() {
		h, err := download.HashFileContext(ctx, p)
		if err != nil {
			return false
		}
		lf = state.LocalFile{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Hash: keys.EncodeB64(h)}
		_ = l.st.PutLocal(rel, lf) // a hash not kept is made again next run
	}
	return lf.Hash == want
}
