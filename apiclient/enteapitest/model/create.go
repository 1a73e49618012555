package model

import (
	"github.com/quak-photos/quak/apiclient/keys"
)

// Albums as a restore makes and fills them: POST /collections, GET
// /collections/{id} and POST /collections/add-files (UP.6, UP.7).

// NewAlbum is a POST /collections body, its base64 decoded (nil where it
// was not base64).
type NewAlbum struct {
	EncryptedKey, KeyDecryptionNonce   []byte
	EncryptedName, NameDecryptionNonce []byte
	Type                               string
	MagicMetadata                      *Magic
}

// CreateCollection answers a bound POST /collections as museum does
// (UP.6): the key and nonce 48 and 24 bytes and the type known, else 500
// (not 400). A second favorites or uncategorized album is not made: the
// answer is the existing one, with its existing key (500 if that one was
// deleted). What was sent is stored and listed as sent; the fake opens the
// key with the owner's master key only to seal it for sharees.
func (m *Museum) CreateCollection(u *User, in NewAlbum) (CollectionView, error) {
	if in.Type == "CollectionType.album" {
		in.Type = "album"
	}
	known := in.Type == "album" || in.Type == "folder" || in.Type == "favorites" || in.Type == "uncategorized"
	if len(in.EncryptedKey) != 48 || len(in.KeyDecryptionNonce) != 24 || !known {
		return CollectionView{}, plain(Internal)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if in.Type == "favorites" || in.Type == "uncategorized" {
		if a := m.singleton(u, in.Type); a != nil {
			if a.deleted {
				return CollectionView{}, plain(Internal)
			}
			c, _ := m.collectionFor(a, u)
			return c, nil
		}
	}
	key, _ := keys.SecretboxOpen(in.EncryptedKey, in.KeyDecryptionNonce, u.MasterKey)
	if key == nil {
		key = m.random(32)
	}
	a := m.newAlbum(u, in.Type, key)
	if name, err := keys.SecretboxOpen(in.EncryptedName, in.NameDecryptionNonce, a.key); err == nil {
		a.Name = string(name)
	}
	sent := in
	m.up.albums[a.ID] = &sent
	c, _ := m.collectionFor(a, u)
	return c, nil
}

// singleton is u's album of a per-user type, deleted or not; m.mu is held.
func (m *Museum) singleton(u *User, typ string) *Album {
	for _, a := range m.albums {
		if a.Owner == u && a.Type == typ {
			return a
		}
	}
	return nil
}

// asSent replaces what the fake renders of an album made by POST
// /collections with what was sent, for its owner; m.mu is held.
func (m *Museum) asSent(a *Album, u *User, c *CollectionView) {
	if a.Owner != u {
		return
	}
	if sent := m.up.albums[a.ID]; sent != nil {
		c.EncryptedKey, c.KeyDecryptionNonce = sent.EncryptedKey, sent.KeyDecryptionNonce
		c.EncryptedName, c.NameDecryptionNonce = sent.EncryptedName, sent.NameDecryptionNonce
		c.MagicMetadata = sent.MagicMetadata
	}
}

// AddItem is one file of a POST /collections/add-files body, as sent.
type AddItem struct {
	ID                               int64
	EncryptedKey, KeyDecryptionNonce string
}

// AddFiles answers POST /collections/add-files as museum does (UP.7),
// for a body with every field (the caller checks those, 400): at most
// 1000 files (413); the album there, live and u's or shared to u as a
// collaborator (404, or 403 for a viewer); the same id twice (400); every
// file u's (403 when another user owns one, 400 when one does not exist);
// none in the trash (409 FILE_IN_TRASH). Files join with the key sent, as
// sent (junk too); a file already there, or removed earlier, keeps its
// old key and only comes back to life. Every entry added and the album
// get one new updationTime.
func (m *Museum) AddFiles(u *User, collectionID int64, items []AddItem) error {
	if len(items) > 1000 {
		return plain(TooLarge)
	}
	ids := make([]int64, len(items))
	for i, f := range items {
		ids[i] = f.ID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.albums[collectionID]
	if err := m.mayAdd(u, a); err != nil {
		return err
	}
	if err := m.owns(u, ids); err != nil {
		return err
	}
	for _, id := range ids {
		if m.files[id].trashed {
			return refuse(Conflict, "FILE_IN_TRASH", "One or more files are in trash or have been deleted, please restore them first")
		}
	}
	stamp := m.tick()
	for _, f := range items {
		e := a.entries[f.ID]
		if e == nil {
			e = &entry{file: m.files[f.ID], encKey: dec(f.EncryptedKey), nonce: dec(f.KeyDecryptionNonce), added: stamp}
			a.entries[f.ID] = e
		}
		e.deleted, e.updated = false, stamp
	}
	a.updated = stamp
	return nil
}

// mayAdd is museum's access check for adding to album a (UP.7); m.mu is
// held.
func (m *Museum) mayAdd(u *User, a *Album) error {
	var sh *share
	if a != nil {
		sh = a.shares[u.ID]
	}
	switch {
	case a == nil, a.Owner != u && (sh == nil || sh.removed), a.deleted:
		return plain(NotFound)
	case a.Owner != u && sh.role != "COLLABORATOR" && sh.role != "ADMIN":
		return plain(Forbidden)
	}
	return nil
}

// owns is museum's VerifyFileOwnership (UP.7): 400 for a repeated id or
// ids of no file at all or some missing, 403 when anyone else owns one;
// m.mu is held.
func (m *Museum) owns(u *User, ids []int64) error {
	seen := map[int64]bool{}
	owners := map[*User]int{}
	for _, id := range ids {
		if seen[id] {
			return plain(BadRequest)
		}
		seen[id] = true
		if f := m.files[id]; f != nil {
			owners[f.Owner]++
		}
	}
	switch {
	case len(owners) == 0:
		return plain(BadRequest)
	case len(owners) > 1 || owners[u] == 0:
		return plain(Forbidden)
	case owners[u] != len(ids):
		return plain(BadRequest)
	}
	return nil
}
