package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/download/state"
)

// reserved names in every album folder, and at the top level.
var (
	reservedInAlbum = []string{".meta"}
	reservedTop     = []string{StateDir}
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
	for i := range entries {
		raw := &entries[i]
		sf, err := r.st.File(raw.ID)
		if err != nil {
			return out, false, err
		}
		it, err := catalog.OpenItem(raw, a)
		switch {
		case err != nil:
			add(r.fail(sf, raw, a, "", err))
		case it.Deleted:
			if rec := r.deleted(sf, a, c); rec != nil {
				add(rec)
			}
		case sf == nil || sf.Status == state.Failed || sf.Header != keys.EncodeB64(it.Header):
			if rec := r.adoptExisting(it, sf, a, c); rec != nil {
				add(rec)
				continue
			}
			jobs = append(jobs, it)
			prev[it.FileID] = sf
			bytes += plainSize(it.Size)
		default:
			rec, again, err := r.update(it, sf, a, c)
			switch {
			case again:
				jobs = append(jobs, it)
				prev[it.FileID] = sf
				bytes += plainSize(it.Size)
			case err != nil:
				add(r.fail(sf, raw, a, it.Meta.Title, err))
			case rec != nil:
				add(rec)
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
		if !catalog.IsLivePhoto(it.Meta) {
			names[it.FileID] = r.entryNames(c, r.previous(prev[it.FileID], c, it), it.Meta.Title, []string{""})
		}
	}
	sem := make(chan struct{}, r.o.Concurrency)
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
			rec, err := r.download(ctx, it, prev[it.FileID], a, c, names[it.FileID])
			if err != nil {
				cancel(err)
				return
			}
			add(rec)
		}(it)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return out, false, context.Cause(ctx)
	}
	return out, true, nil
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
	rec.Updated = time.Now().UTC()
	return rec
}

// fail records a file that could not be saved; the run goes on, and the
// next run retries it first.
func (r *run) fail(sf *state.File, raw *apiclient.File, a *catalog.Album, title string, err error) *state.File {
	rec := record(&catalog.Item{FileID: raw.ID, OwnerID: raw.OwnerID}, sf)
	rec.Status, rec.Error, rec.Pending = state.Failed, err.Error(), raw
	r.mu.Lock()
	r.sum.Failed++
	r.touched[raw.ID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileFailed, Album: a.Name, Title: title, FileID: raw.ID, CollectionID: a.ID, Err: err})
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

// download fetches, verifies and places a file, then refreshes its copies
// in other albums. Only errors that stop the run are returned; a failed file
// comes back as a Failed record.
func (r *run) download(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
	rec := record(it, sf)
	dir, err := r.albumDir(c)
	if err != nil {
		return r.fail(sf, it.Raw, a, it.Meta.Title, err), nil
	}
	live := catalog.IsLivePhoto(it.Meta)
	t := download.Target{FileID: it.FileID, Key: it.Key, Header: it.Header, Size: it.Size, Hash: it.Meta.Hash}
	if live {
		t.Hash = "" // checked per part after unzipping
	}
	p, err := r.fetcher.Fetch(ctx, t, dir)
	if err != nil {
		if fatal(ctx, err) {
			return nil, err
		}
		return r.fail(sf, it.Raw, a, it.Meta.Title, err), nil
	}
	size := p.Size
	old := r.previous(sf, c, it)
	names, mismatch, err := r.place(p, it, c, old, live, named)
	if err != nil {
		return r.fail(sf, it.Raw, a, it.Meta.Title, err), nil
	}
	rec.Header, rec.Size, rec.Meta, rec.Error, rec.Pending = keys.EncodeB64(it.Header), it.Size, it.Meta, "", nil
	rec.Status = state.Saved
	if mismatch {
		rec.Status = state.HashMismatch
	}
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	if err := r.writeSidecar(rec, c, old); err != nil {
		return r.fail(sf, it.Raw, a, it.Meta.Title, err), nil
	}
	for cid, e := range rec.Entries {
		if cid != c.ID && !e.Deleted {
			if err := r.relink(rec, c, cid); err != nil {
				r.emit(Event{Kind: FileFailed, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: cid, Err: err})
			}
		}
	}
	r.mu.Lock()
	r.sum.New++
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
	return rec, nil
}

// place gives a downloaded file its final name(s) in the album folder. A
// live photo is unzipped into its two parts, each checked against its hash.
func (r *run) place(p *download.Partial, it *catalog.Item, c *state.Collection, old *state.Entry, live bool, named []string) (names []string, mismatch bool, err error) {
	mtime := micros(it.Meta.CreationTime)
	dir, err := r.albumDir(c)
	if err != nil {
		p.Discard()
		return nil, false, err
	}
	if !live {
		if named == nil {
			named = r.entryNames(c, old, it.Meta.Title, []string{""})
		}
		name := named[0]
		if err := p.Commit(filepath.Join(dir, name), r.o.FileMode, mtime); err != nil {
			return nil, false, err
		}
		r.dropOld(c, old, []string{name})
		return []string{name}, p.HashMismatch, nil
	}
	img, vid, err := livephoto.Unpack(p.Path(), dir, download.TempPrefix)
	p.Discard()
	if err != nil {
		return nil, false, err
	}
	ih, vh, ok := catalog.SplitLiveHash(it.Meta.Hash)
	mismatch = ok && (!livephoto.HashMatches(ih, img.Hash) || !livephoto.HashMatches(vh, vid.Hash))
	names = r.entryNames(c, old, it.Meta.Title, []string{img.Ext, vid.Ext})
	for i, part := range []*livephoto.Part{img, vid} {
		if err := commitTemp(part.Path, filepath.Join(dir, names[i]), r.o.FileMode, mtime); err != nil {
			_ = os.Remove(img.Path)
			_ = os.Remove(vid.Path)
			return nil, false, err
		}
	}
	r.dropOld(c, old, names)
	return names, mismatch, nil
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
func (r *run) entryNames(c *state.Collection, old *state.Entry, title string, exts []string) []string {
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
		want := layout.Sanitize(stem+ext, fallback+ext)
		names[i] = n.UniqueFree(want, func(name string) bool {
			_, err := os.Lstat(filepath.Join(dir, name))
			return errors.Is(err, os.ErrNotExist)
		})
	}
	return names
}

func sameExts(parts, exts []string) bool {
	for i, e := range exts {
		if e != "" && !strings.EqualFold(filepath.Ext(parts[i]), e) {
			return false
		}
	}
	return true
}

// dropOld removes an entry's old parts and sidecar that the new names no
// longer use.
func (r *run) dropOld(c *state.Collection, old *state.Entry, keep []string) {
	if old == nil {
		return
	}
	dir, err := r.albumDir(c)
	if err != nil {
		return
	}
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	n := r.namer(c)
	for _, part := range old.Parts {
		if !kept[part] {
			_ = os.Remove(filepath.Join(dir, part))
			r.mu.Lock()
			n.Release(part)
			r.mu.Unlock()
		}
	}
	if !kept[old.Name] {
		_ = os.Remove(filepath.Join(dir, ".meta", old.Name+".json"))
	}
}

// update handles an entry of a file whose content is saved already: a copy
// for a new album, a metadata edit, or nothing. again asks for a download
// (the local copies are gone).
func (r *run) update(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (rec *state.File, again bool, err error) {
	e := sf.Entries[c.ID]
	if e != nil && !r.partsExist(c, e) {
		return nil, true, nil
	}
	if e == nil {
		return r.link(it, sf, a, c)
	}
	if !e.Deleted && metaEqual(e.Meta, it.Meta) {
		return nil, false, nil
	}
	rec = record(it, sf)
	ne := rec.Entries[c.ID]
	ne.Deleted = false
	dir, err := r.albumDir(c)
	if err != nil {
		return nil, false, err
	}
	if ne.Meta.Title != it.Meta.Title {
		exts := make([]string, len(ne.Parts))
		if len(exts) > 1 {
			for i, p := range ne.Parts {
				exts[i] = filepath.Ext(p)
			}
		}
		names := r.entryNames(c, nil, it.Meta.Title, exts)
		for i, p := range ne.Parts {
			if err := os.Rename(filepath.Join(dir, p), filepath.Join(dir, names[i])); err != nil {
				return nil, false, err
			}
		}
		old := *ne
		ne.Name, ne.Parts = names[0], names
		r.dropOld(c, &old, names)
		r.emit(Event{Kind: FileRenamed, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
			Path: filepath.Join(c.Folder, names[0])})
	}
	mtime := micros(it.Meta.CreationTime)
	for _, p := range ne.Parts {
		if err := os.Chtimes(filepath.Join(dir, p), mtime, mtime); err != nil {
			return nil, false, err
		}
	}
	ne.Meta, rec.Meta = it.Meta, it.Meta
	if err := r.writeSidecar(rec, c, nil); err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	r.sum.Updated++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: MetadataUpdated, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, ne.Name)})
	return rec, false, nil
}

func metaEqual(a, b state.Meta) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Title == b.Title && a.FileType == b.FileType && a.CreationTime == b.CreationTime &&
		a.ModificationTime == b.ModificationTime && a.Caption == b.Caption && a.Hash == b.Hash &&
		eq(a.Latitude, b.Latitude) && eq(a.Longitude, b.Longitude)
}

// link places a file saved for one album into another: hard links to the
// saved parts (copies where links are impossible), never a second download.
func (r *run) link(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) (*state.File, bool, error) {
	src, srcDir := r.source(sf)
	if src == nil {
		return nil, true, nil
	}
	dir, err := r.albumDir(c)
	if err != nil {
		return nil, false, err
	}
	exts := []string{""}
	if len(src.Parts) > 1 {
		exts = make([]string, len(src.Parts))
		for i, p := range src.Parts {
			exts[i] = filepath.Ext(p)
		}
	}
	names := r.entryNames(c, nil, it.Meta.Title, exts)
	for i, p := range src.Parts {
		if err := linkOrCopy(filepath.Join(srcDir, p), filepath.Join(dir, names[i])); err != nil {
			return nil, false, err
		}
	}
	rec := record(it, sf)
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	if err := r.writeSidecar(rec, c, nil); err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	r.sum.Linked++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileLinked, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec, false, nil
}

// relink refreshes a file's copy in album cid from its new copy in c.
func (r *run) relink(rec *state.File, c *state.Collection, cid int64) error {
	oc := r.colls[cid]
	e, src := rec.Entries[cid], rec.Entries[c.ID]
	if oc == nil || len(e.Parts) != len(src.Parts) {
		return nil
	}
	from, err := r.albumDir(c)
	if err != nil {
		return err
	}
	to, err := r.albumDir(oc)
	if err != nil {
		return err
	}
	for i := range src.Parts {
		if err := linkOrCopy(filepath.Join(from, src.Parts[i]), filepath.Join(to, e.Parts[i])); err != nil {
			return err
		}
	}
	e.Meta = rec.Meta
	return r.writeSidecar(rec, oc, nil)
}

// source finds a saved copy of the file whose parts exist on disk.
func (r *run) source(sf *state.File) (*state.Entry, string) {
	for cid, e := range sf.Entries {
		c := r.colls[cid]
		if c == nil || !r.partsExist(c, e) {
			continue
		}
		if dir, err := r.albumDir(c); err == nil {
			return e, dir
		}
	}
	return nil, ""
}

func (r *run) partsExist(c *state.Collection, e *state.Entry) bool {
	dir, err := r.albumDir(c)
	if err != nil || len(e.Parts) == 0 {
		return false
	}
	for _, p := range e.Parts {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// albumDir is the album's folder, created if needed and checked to be
// inside the backup folder.
func (r *run) albumDir(c *state.Collection) (string, error) {
	dir, err := layout.Join(r.dir, c.Folder)
	if err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
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
		n = layout.NewNamer()
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
	sc := newSidecar(rec, c.ID, c.Name, e.Parts)
	sc.Title = e.Meta.Title
	if err := r.writeJSON(p, sc); err != nil {
		return err
	}
	if old != nil && old.Name != e.Name {
		_ = os.Remove(filepath.Join(filepath.Dir(p), old.Name+".json"))
	}
	return nil
}

// adoptExisting recognises a file that an `ente export` already saved in an
// adopted folder: when its bytes match the metadata hash it is recorded as
// saved, without a download.
func (r *run) adoptExisting(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	r.mu.Lock()
	names := r.adopt[c.ID][it.FileID]
	r.mu.Unlock()
	if sf != nil || len(names) == 0 || it.Meta.Hash == "" {
		return nil
	}
	dir, err := r.albumDir(c)
	if err != nil {
		return nil
	}
	var want []string
	if catalog.IsLivePhoto(it.Meta) {
		ih, vh, ok := catalog.SplitLiveHash(it.Meta.Hash)
		if !ok || len(names) != 2 {
			return nil
		}
		want = []string{ih, vh}
	} else {
		if len(names) != 1 {
			return nil
		}
		want = []string{it.Meta.Hash}
	}
	for i, n := range names {
		h, err := hashFile(filepath.Join(dir, n))
		if err != nil || !livephoto.HashMatches(want[i], h) {
			return nil
		}
	}
	rec := record(it, sf)
	rec.Header, rec.Size, rec.Meta, rec.Status = keys.EncodeB64(it.Header), it.Size, it.Meta, state.Saved
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	n := r.namer(c)
	r.mu.Lock()
	for _, name := range names {
		n.Take(name)
	}
	r.sum.Adopted++
	r.touched[it.FileID] = true
	r.mu.Unlock()
	if err := r.writeSidecar(rec, c, nil); err != nil {
		return nil
	}
	r.emit(Event{Kind: FileAdopted, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec
}

func hashFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return download.HashOf(f)
}

// commitTemp gives a synced temp file its mode and final name, fsyncs the
// folder and sets the mtime.
func commitTemp(tmp, final string, mode os.FileMode, mtime time.Time) error {
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	if err := download.SyncDir(filepath.Dir(final)); err != nil {
		return err
	}
	return os.Chtimes(final, mtime, mtime)
}

// linkOrCopy makes dst the same file as src: a hard link, or a copy where
// the file system cannot link. It goes through a temp name, so dst is never
// half-written and a stale dst is replaced.
func linkOrCopy(src, dst string) error {
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(dir, download.TempPrefix+"link-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_ = tmp.Close()
	_ = os.Remove(name)
	if err := os.Link(src, name); err != nil {
		if err := copyFile(src, name); err != nil {
			_ = os.Remove(name)
			return fmt.Errorf("copying %s: %w", filepath.Base(src), err)
		}
	}
	if err := os.Rename(name, dst); err != nil {
		_ = os.Remove(name)
		return err
	}
	return download.SyncDir(dir)
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	if err = out.Sync(); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// plainSize estimates plaintext bytes from a ciphertext size.
func plainSize(ct int64) int64 {
	if ct <= 0 {
		return 0
	}
	chunks := (ct + secretstream.ChunkSize + secretstream.Overhead - 1) / (secretstream.ChunkSize + secretstream.Overhead)
	return ct - chunks*secretstream.Overhead
}
