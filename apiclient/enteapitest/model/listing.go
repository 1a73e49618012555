package model

import (
	"encoding/json"
	"sort"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// Listings: albums, their diffs, one entry, the trash and file sizes, as
// museum answers them.

// CollectionView is an album as one user sees it.
type CollectionView struct {
	ID                  int64
	Owner               Participant
	EncryptedKey        []byte
	KeyDecryptionNonce  []byte // owned albums only
	EncryptedName       []byte
	NameDecryptionNonce []byte
	Type                string
	Sharees             []Participant
	UpdationTime        int64
	IsDeleted           bool
	MagicMetadata       *Magic         // the owner's
	SharedMagicMetadata *Magic         // a sharee's
	Links               []LinkSettings // its public link, for its owner
}

// Participant is an album's owner or a sharee.
type Participant struct {
	ID    int64
	Email string // blank for the caller's own albums
	Role  string
}

// collectionFor renders album a as u sees it, and whether u sees it at
// all; m.mu is held.
func (m *Museum) collectionFor(a *Album, u *User) (CollectionView, bool) {
	c := CollectionView{ID: a.ID, Type: a.Type, UpdationTime: a.updated, IsDeleted: a.deleted}
	nonce := m.random(24)
	c.EncryptedName = keys.SecretboxSeal([]byte(a.Name), nonce, a.key)
	c.NameDecryptionNonce = nonce
	if a.Owner == u {
		kn := m.random(24)
		c.Owner = Participant{ID: u.ID}
		c.EncryptedKey = keys.SecretboxSeal(a.key, kn, u.MasterKey)
		c.KeyDecryptionNonce = kn
		c.MagicMetadata = m.collectionMagic(a, a.visibility)
		if l := m.links.active[a.ID]; l != nil && !l.current().disabled {
			c.Links = []LinkSettings{l.row.settings(AlbumsURL + "/?t=" + l.token)}
		}
	} else {
		sh := a.shares[u.ID]
		if sh == nil || a.Owner.gone {
			return c, false
		}
		c.Owner = Participant{ID: a.Owner.ID, Email: a.Owner.Email}
		c.EncryptedKey = sh.sealedKey
		c.IsDeleted = a.deleted || sh.removed
		c.SharedMagicMetadata = m.collectionMagic(a, sh.visibility)
		c.UpdationTime = max(a.updated, sh.updated)
	}
	m.asSent(a, u, &c)
	for _, sh := range a.shares {
		if !sh.removed {
			c.Sharees = append(c.Sharees, Participant{ID: sh.user.ID, Email: sh.user.Email, Role: sh.role})
		}
	}
	return c, true
}

// collectionMagic is the magic metadata an album's visibility writes;
// m.mu is held.
func (m *Museum) collectionMagic(a *Album, visibility int) *Magic {
	if visibility == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]int{"visibility": visibility})
	h := m.random(secretstream.HeaderSize)
	return &Magic{Version: 1, Count: 1, Data: mustSeal(a.key, h, b), Header: h}
}

// Collections answers GET /collections/v2?sinceTime: every album u sees
// that changed after since, newest id first (museum promises no order;
// this one catches a client that takes the last as its cursor).
func (m *Museum) Collections(u *User, since int64) []CollectionView {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []CollectionView{}
	for _, a := range m.albums {
		if c, ok := m.collectionFor(a, u); ok && c.UpdationTime > since {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// Collection answers GET /collections/{id}: the album as its owner or a
// current sharee sees it, deleted ones included; 404 for anyone else or
// no such album.
func (m *Museum) Collection(u *User, id int64) (CollectionView, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.albums[id]
	if a == nil {
		return CollectionView{}, plain(NotFound)
	}
	if sh := a.shares[u.ID]; a.Owner != u && (sh == nil || sh.removed) {
		return CollectionView{}, plain(NotFound)
	}
	c, _ := m.collectionFor(a, u)
	return c, nil
}

// Entry is one (file, album) entry of a diff as a reader sees it.
type Entry struct {
	FileID, OwnerID                  int64
	CollectionID, CollectionOwnerID  int64
	EncryptedKey, KeyDecryptionNonce []byte
	FileHeader, ThumbnailHeader      []byte
	Metadata, MetadataHeader         []byte
	MagicMetadata                    *Magic // the owner's private one, for the owner
	PubMagicMetadata                 *Magic
	Info                             *Info // nil: files.info is NULL
	IsDeleted                        bool
	AddedAt, UpdationTime            int64
}

// Info is files.info: the ciphertext sizes of a file's objects.
type Info struct {
	FileSize, ThumbSize int64
}

// entryFor renders one album entry for u; m.mu is held. A deleted entry
// keeps its key, headers and metadata, as museum's do (only a file deleted
// for good is scrubbed, and the fake purges none).
func (m *Museum) entryFor(a *Album, e *entry, u *User) Entry {
	f := e.file
	out := Entry{FileID: f.ID, OwnerID: f.Owner.ID, CollectionID: a.ID, CollectionOwnerID: a.Owner.ID,
		AddedAt: e.added, UpdationTime: e.updated, IsDeleted: e.deleted}
	out.EncryptedKey, out.KeyDecryptionNonce = e.encKey, e.nonce
	out.FileHeader, out.ThumbnailHeader = f.content.header, f.thumb.header
	out.Metadata, out.MetadataHeader = f.meta.data, f.meta.header
	out.PubMagicMetadata = f.meta.pub
	if f.Owner == u {
		out.MagicMetadata = m.up.magic[f.ID]
	}
	if f.infoNull {
		return out
	}
	info := &Info{FileSize: m.store.objects[f.content.object].size}
	if f.spec.AnnounceSize != 0 {
		info.FileSize = f.spec.AnnounceSize
	}
	if f.thumb.object != "" {
		info.ThumbSize = f.thumb.info
	}
	out.Info = info
	return out
}

// Diff answers GET /collections/v2/diff: the next page of the album's
// entries changed after since, for u, and whether more follow; 404 {}
// when u may not read it (or it is deleted, or there is none).
func (m *Museum) Diff(u *User, collectionID, since int64) ([]Entry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.readable(u, collectionID)
	if a == nil {
		return nil, false, plain(NotFound)
	}
	page, more := m.page(a, since, u)
	return page, more, nil
}

// page is the next page of a's entries after since as u sees them, and
// whether more follow; m.mu is held.
func (m *Museum) page(a *Album, since int64, u *User) ([]Entry, bool) {
	es, more := m.diffPage(a, since)
	page := make([]Entry, 0, len(es))
	for _, e := range es {
		page = append(page, m.entryFor(a, e, u))
	}
	a.touchIfEndless(es)
	return page, more || a.hostile.neverEnding
}

// diffPage is the next page of album a's entries changed after since, as
// museum's CollectionController.getDiff cuts it, and whether more follow:
// the first PageSize+1 entries in time order; all of them when that is
// all there is; else without the trailing entries of the last one's time
// (a page never splits one updationTime, so it can be short); and when
// that leaves nothing, every entry of that one time (a page longer than
// PageSize). Entries of one time come in id order (museum's order among
// them is arbitrary). m.mu is held.
func (m *Museum) diffPage(a *Album, since int64) (page []*entry, more bool) {
	var es []*entry
	for _, e := range a.entries {
		if e.updated > since {
			es = append(es, e)
		}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].updated != es[j].updated {
			return es[i].updated < es[j].updated
		}
		return es[i].file.ID < es[j].file.ID
	})
	limit := m.cfg.PageSize
	if len(es) <= limit {
		return es, false
	}
	last := es[limit].updated
	n := limit + 1
	for n > 0 && es[n-1].updated == last {
		n--
	}
	if n > 0 {
		return es[:n], true
	}
	for n < len(es) && es[n].updated == last {
		n++
	}
	return es[:n], true
}

// endlessPages is how long an endless album's listing goes on: far past
// any client's cap, yet it ends, so a client without one fails its test
// in seconds instead of hanging it.
const endlessPages = 2000

// touchIfEndless changes the entries just served again, for an endless
// album: its listing goes on advancing, for endlessPages pages. m.mu is
// held.
func (a *Album) touchIfEndless(es []*entry) {
	if !a.hostile.endless {
		return
	}
	a.hostile.served++
	if a.hostile.served >= endlessPages {
		a.hostile = hostileListing{}
		return
	}
	for _, e := range es {
		e.updated = a.m.tick()
	}
}

// CollectionFile answers GET /collections/file in museum's order
// (CollectionController.GetFile): no entry at all is 404
// FILE_NOT_FOUND_IN_ALBUM; someone else's file needs a live share of the
// album to u, else 403 (so a collaborator's file in u's own album is 403
// too); a deleted entry is 404. The album itself is not checked.
func (m *Museum) CollectionFile(u *User, collectionID, fileID int64) (Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.albums[collectionID]
	var e *entry
	if a != nil {
		e = a.entries[fileID]
	}
	notFound := refuse(NotFound, "FILE_NOT_FOUND_IN_ALBUM", "file not found in album")
	if e == nil {
		return Entry{}, notFound
	}
	if sh := a.shares[u.ID]; e.file.Owner != u && (sh == nil || sh.removed) {
		return Entry{}, plain(Forbidden)
	}
	if e.deleted {
		return Entry{}, notFound
	}
	return m.entryFor(a, e, u), nil
}

// TrashEntry is one entry of the trash diff: a trashed file of the
// caller's, in one album.
type TrashEntry struct {
	FileID, CollectionID int64
	UpdatedAt            int64
}

// TrashDiff answers GET /trash/v2/diff: u's trashed files changed after
// since.
func (m *Museum) TrashDiff(u *User, since int64) []TrashEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []TrashEntry{}
	for _, a := range m.albums {
		for _, e := range a.entries {
			if e.file.Owner == u && e.file.trashed && e.updated > since {
				out = append(out, TrashEntry{FileID: e.file.ID, CollectionID: a.ID, UpdatedAt: e.updated})
			}
		}
	}
	return out
}

// FileSizes is one answer of POST /files/info: a file's sizes as
// files.info records them (-1 for a thumbnail without a row).
type FileSizes struct {
	ID                  int64
	FileSize, ThumbSize int64
}

// FilesInfo answers POST /files/info as museum does (FileController.
// GetFileInfo, repo.VerifyFileOwner): the whole batch fails when one id is
// not u's (403), or is missing or repeated (400, since museum compares a
// row count with the number of ids); an empty list is 400. The sizes are
// files.info's, as recorded at upload; a NULL info is read from the
// objects and written in.
func (m *Museum) FilesInfo(u *User, ids []int64) ([]FileSizes, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	owners := map[*User]int{}
	seen := map[int64]bool{}
	for _, id := range ids {
		if f := m.files[id]; f != nil && !seen[id] {
			owners[f.Owner]++
		}
		seen[id] = true
	}
	switch {
	case len(owners) == 0:
		return nil, refuse(BadRequest, "BAD_REQUEST", "")
	case len(owners) > 1 || owners[u] == 0:
		return nil, plain(Forbidden)
	case owners[u] != len(ids):
		return nil, refuse(BadRequest, "BAD_REQUEST", "")
	}
	out := []FileSizes{}
	for _, id := range ids {
		f := m.files[id]
		if f.infoNull {
			f.infoNull, f.thumb.info = false, f.thumb.recorded
		}
		sizes := FileSizes{ID: id, FileSize: m.store.objects[f.content.object].size, ThumbSize: -1}
		if f.thumb.object != "" {
			sizes.ThumbSize = f.thumb.info
		}
		out = append(out, sizes)
	}
	return out, nil
}
