package state

import (
	"encoding/json"

	"github.com/quak-photos/quak/apiclient/catalog"
)

// filesFill is the files bucket's fill percent: ids mostly grow, so pages
// are filled before they split instead of being left half empty.
const filesFill = 1.0

// compactForm marks a record written in the compact form: what equals the
// file's own metadata is not written again for each album entry.
const compactForm = 2

// diskFile is a File as stored. In the compact form (V = compactForm) an
// entry without meta has the file's, an entry without parts has one part
// named as the entry, and a missing localHash is the metadata's hash.
// Records of older quaks (V = 0) wrote every field, and are read as they
// were written.
type diskFile struct {
	V           int                  `json:"v,omitempty"`
	ID          int64                `json:"id"`
	OwnerID     int64                `json:"ownerID,omitempty"`
	Header      string               `json:"header,omitempty"`
	Size        int64                `json:"size,omitempty"`
	Meta        diskMeta             `json:"meta"`
	LocalHash   *string              `json:"localHash,omitempty"`
	Status      Status               `json:"status"`
	Error       string               `json:"error,omitempty"`
	Entries     map[int64]*diskEntry `json:"entries,omitempty"`
	Pending     *diskDiffEntry       `json:"pending,omitempty"`
	PendingAlso []*diskDiffEntry     `json:"pendingAlso,omitempty"`
	View        *View                `json:"view,omitempty"`
	Trash       []TrashCopy          `json:"trash,omitempty"`
}

// diskMeta is catalog.Meta as a record holds it. A field the catalog gains
// fails to compile here (the conversions need the same fields) until the
// record is given it too.
type diskMeta struct {
	Title            string   `json:"title"`
	FileType         int      `json:"fileType,omitempty"`
	CreationTime     int64    `json:"creationTime,omitempty"`
	ModificationTime int64    `json:"modificationTime,omitempty"`
	Caption          string   `json:"caption,omitempty"`
	Latitude         *float64 `json:"latitude,omitempty"`
	Longitude        *float64 `json:"longitude,omitempty"`
	Hash             string   `json:"hash,omitempty"`
	Offset           string   `json:"offset,omitempty"`
	Visibility       int      `json:"visibility,omitempty"`
}

type diskEntry struct {
	Name          string            `json:"name"`
	Parts         *[]string         `json:"parts,omitempty"`
	Deleted       bool              `json:"deleted,omitempty"`
	Copy          bool              `json:"copy,omitempty"`
	Stale         bool              `json:"stale,omitempty"`
	Meta          *diskMeta         `json:"meta,omitempty"`
	Updated       int64             `json:"updated,omitempty"`
	Sidecars      []string          `json:"sidecars,omitempty"`
	SidecarHashes map[string]string `json:"sidecarHashes,omitempty"`
}

func encodeFile(f *File) ([]byte, error) {
	d := diskFile{V: compactForm, ID: f.ID, OwnerID: f.OwnerID, Header: f.Header, Size: f.Size, Meta: diskMeta(f.Meta),
		Status: f.Status, Error: f.Error, Pending: diskDiffEntryOf(f.Pending), PendingAlso: diskDiffEntries(f.PendingAlso),
		View: f.View, Trash: f.Trash}
	if f.LocalHash != f.Meta.Hash {
		d.LocalHash = &f.LocalHash
	}
	if len(f.Entries) > 0 {
		d.Entries = make(map[int64]*diskEntry, len(f.Entries))
	}
	for cid, e := range f.Entries {
		if e == nil {
			continue
		}
		de := &diskEntry{Name: e.Name, Deleted: e.Deleted, Copy: e.Copy, Stale: e.Stale, Updated: e.Updated,
			Sidecars: e.Sidecars, SidecarHashes: e.SidecarHashes}
		if len(e.Parts) != 1 || e.Parts[0] != e.Name {
			parts := e.Parts
			if parts == nil {
				parts = []string{}
			}
			de.Parts = &parts
		}
		if !e.Meta.Equal(f.Meta) {
			m := diskMeta(e.Meta)
			de.Meta = &m
		}
		d.Entries[cid] = de
	}
	return json.Marshal(&d)
}

func decodeFile(v []byte) (*File, error) {
	var d diskFile
	if err := json.Unmarshal(v, &d); err != nil {
		return nil, err
	}
	compact := d.V >= compactForm
	f := &File{ID: d.ID, OwnerID: d.OwnerID, Header: d.Header, Size: d.Size, Meta: catalog.Meta(d.Meta), Status: d.Status,
		Error: d.Error, Pending: d.Pending.diffEntry(), PendingAlso: diffEntries(d.PendingAlso), View: d.View, Trash: d.Trash,
		Entries: make(map[int64]*Entry, len(d.Entries))}
	switch {
	case d.LocalHash != nil:
		f.LocalHash = *d.LocalHash
	case compact:
		f.LocalHash = f.Meta.Hash
	}
	for cid, de := range d.Entries {
		if de == nil {
			continue
		}
		e := &Entry{Name: de.Name, Deleted: de.Deleted, Copy: de.Copy, Stale: de.Stale, Updated: de.Updated,
			Sidecars: de.Sidecars, SidecarHashes: de.SidecarHashes}
		switch {
		case de.Parts != nil:
			e.Parts = *de.Parts
		case compact:
			e.Parts = []string{de.Name}
		}
		switch {
		case de.Meta != nil:
			e.Meta = catalog.Meta(*de.Meta)
		case compact:
			e.Meta = f.Meta
		}
		f.Entries[cid] = e
	}
	return f, nil
}
