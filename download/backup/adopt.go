package backup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

// An album folder that an `ente export` made is adopted: the files its
// sidecars describe are checked against their hashes, not downloaded
// again.

// scanExport reads the sidecars of an adopted folder, so the files they
// describe can be checked instead of downloaded again.
func (p *placer) scanExport(c *state.Collection) error {
	meta, err := layout.Join(p.dir, c.Folder, ".meta")
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
		if id, names := exportNames(filepath.Join(meta, e.Name())); id != 0 {
			found[id] = names
		}
	}
	p.mu.Lock()
	p.adopt[c.ID] = found
	p.mu.Unlock()
	return nil
}

// exportNames reads an `ente export` sidecar: the file id and the names it
// gives the file's parts, or 0 when it names none or a name would leave
// the folder.
func exportNames(path string) (int64, []string) {
	var sc struct {
		Info struct {
			ID        int64    `json:"id"`
			FileNames []string `json:"fileNames"`
		} `json:"info"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &sc) != nil || sc.Info.ID == 0 || len(sc.Info.FileNames) == 0 {
		return 0, nil
	}
	for _, n := range sc.Info.FileNames {
		if layout.Sanitize(n, "") != n { // names that would leave the folder are ignored
			return 0, nil
		}
	}
	return sc.Info.ID, sc.Info.FileNames
}

// folderAlbum reports whether folder exists under DIR and, if it has an
// `ente export` album_meta.json, the album id it names (0 otherwise).
func (p *placer) folderAlbum(name string) (id int64, exists bool) {
	dir, err := layout.Join(p.dir, name)
	if err != nil {
		return 0, true
	}
	if _, err := os.Stat(dir); err != nil {
		return 0, false
	}
	var m albumMeta
	b, err := os.ReadFile(filepath.Join(dir, ".meta", "album_meta.json"))
	if err == nil && json.Unmarshal(b, &m) == nil {
		return m.ID, true
	}
	return 0, true
}

// adoptExisting recognises a file that an `ente export` already saved in an
// adopted folder: when its bytes match the metadata hash it is recorded as
// saved, without a download.
func (p *placer) adoptExisting(it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection) *state.File {
	p.mu.Lock()
	names := p.adopt[c.ID][it.FileID]
	p.mu.Unlock()
	if sf != nil || len(names) == 0 || it.Meta.Hash == "" {
		return nil
	}
	dir, err := p.albumDir(c)
	if err != nil || !exportHolds(dir, names, it.Meta) {
		return nil
	}
	rec := record(it, sf)
	rec.Header, rec.Size, rec.Meta, rec.Status = keys.EncodeB64(it.Header), it.Size, it.Meta, state.Saved
	rec.LocalHash = it.Meta.Hash
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	p.names.inAlbum(c.ID, func(n *layout.Namer) {
		for _, name := range names {
			n.Take(name)
		}
	})
	p.tally.did(it.FileID, func(s *Summary) { s.Adopted++ })
	if err := p.views.writeSidecar(rec, c, nil); err != nil {
		return nil
	}
	p.emit(Event{Kind: FileAdopted, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0])})
	return rec
}

// exportHolds reports whether the files names in dir hash to what m says:
// one file, or a live photo's two parts.
func exportHolds(dir string, names []string, m state.Meta) bool {
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
