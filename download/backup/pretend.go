package backup

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/state"
)

// pretender is a dry run's download, noting on d what it would place: the
// file is named and recorded as a real run would, without a byte
// fetched. A live photo's parts are named from its title (the real names
// come from its archive).
func (p *placer) pretender(d *dryDisk) func(context.Context, *catalog.Item, *state.File, *catalog.Album, *state.Collection, []string) (*state.File, error) {
	return func(_ context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
		return p.pretend(d, it, sf, a, c, named), nil
	}
}

func (p *placer) pretend(d *dryDisk, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) *state.File {
	old := p.previous(sf, c, it)
	names := named
	if catalog.IsLivePhoto(it.Meta) {
		names = p.entryNames(c, old, it.FileID, it.Meta.Title, []string{strings.ToLower(filepath.Ext(it.Meta.Title)), ".mov"})
	} else if names == nil {
		names = p.entryNames(c, old, it.FileID, it.Meta.Title, []string{""})
	}
	dir, _ := p.albumDir(c)
	for _, n := range names {
		d.note(filepath.Join(dir, n), true)
	}
	rec := record(it, sf)
	rec.Header, rec.Size, rec.Meta, rec.Error, rec.Pending, rec.PendingAlso = keys.EncodeB64(it.Header), it.Size, it.Meta, "", nil, nil
	rec.Status, rec.LocalHash = state.Saved, it.Meta.Hash
	rec.Entries[c.ID] = &state.Entry{Name: names[0], Parts: names, Meta: it.Meta}
	size := plainSize(it.Size)
	p.tally.did(it.FileID, func(s *Summary) {
		s.New++
		s.Bytes += size
	})
	p.emit(Event{Kind: FileSaved, Album: a.Name, Title: it.Meta.Title, FileID: it.FileID, CollectionID: c.ID,
		Path: filepath.Join(c.Folder, names[0]), Bytes: size})
	return rec
}
