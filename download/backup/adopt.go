package backup

import (
	"path/filepath"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

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
		h, err := download.HashFile(filepath.Join(dir, n))
		if err != nil || !livephoto.HashMatches(want[i], h) {
			return nil
		}
	}
	rec := record(it, sf)
	rec.Header, rec.Size, rec.Meta, rec.Status = keys.EncodeB64(it.Header), it.Size, it.Meta, state.Saved
	rec.LocalHash = it.Meta.Hash
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
