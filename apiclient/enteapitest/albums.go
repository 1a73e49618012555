package enteapitest

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
)

// Albums as a restore makes and fills them: POST /collections, GET
// /collections/{id} and POST /collections/add-files (UP.6, UP.7).

// createCollection answers POST /collections as museum does (UP.6):
// encryptedKey, keyDecryptionNonce and type required (400), the key and
// nonce decoding to 48 and 24 bytes and the type known, else 500 (not
// 400); a magic metadata envelope needs all four fields (400). A second
// favorites or uncategorized album is not made: the answer is the
// existing one, with its existing key (500 if that one was deleted). What
// was sent is stored and listed as sent; the fake opens the key with the
// owner's master key only to seal it for sharees.
func (s *Server) createCollection(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	var in struct {
		EncryptedKey        string     `json:"encryptedKey"`
		KeyDecryptionNonce  string     `json:"keyDecryptionNonce"`
		EncryptedName       string     `json:"encryptedName"`
		NameDecryptionNonce string     `json:"nameDecryptionNonce"`
		Type                string     `json:"type"`
		MagicMetadata       *magicBody `json:"magicMetadata"`
	}
	mm := func() bool {
		m := in.MagicMetadata
		return m == nil || (m.Version != 0 && m.Count != 0 && m.Data != "" && m.Header != "")
	}
	if !readJSON(r, &in) || in.EncryptedKey == "" || in.KeyDecryptionNonce == "" || in.Type == "" || !mm() {
		apiErr(w, 400, "", "")
		return
	}
	if in.Type == "CollectionType.album" {
		in.Type = "album"
	}
	key, err1 := base64.StdEncoding.DecodeString(in.EncryptedKey)
	nonce, err2 := base64.StdEncoding.DecodeString(in.KeyDecryptionNonce)
	known := in.Type == "album" || in.Type == "folder" || in.Type == "favorites" || in.Type == "uncategorized"
	if err1 != nil || err2 != nil || len(key) != 48 || len(nonce) != 24 || !known {
		apiErr(w, 500, "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.Type == "favorites" || in.Type == "uncategorized" {
		if a := s.singleton(u, in.Type); a != nil {
			if a.deleted {
				apiErr(w, 500, "", "")
				return
			}
			c, _, _ := s.collectionFor(a, u)
			writeJSON(w, 200, map[string]any{"collection": c})
			return
		}
	}
	dec := func(v string) []byte {
		b, _ := keys.DecodeB64(v)
		return b
	}
	sent := &apiclient.NewCollection{EncryptedKey: key, KeyDecryptionNonce: nonce, Type: in.Type,
		EncryptedName: dec(in.EncryptedName), NameDecryptionNonce: dec(in.NameDecryptionNonce),
		MagicMetadata: in.MagicMetadata.decoded(dec)}
	a := s.newAlbumFrom(u, sent)
	c, _, _ := s.collectionFor(a, u)
	writeJSON(w, 200, map[string]any{"collection": c})
}

// newAlbumFrom makes the album u's request sent creates, named as its
// sealed name says (when the server can read it: the fake knows the
// user's master key). s.mu is held.
func (s *Server) newAlbumFrom(u *User, sent *apiclient.NewCollection) *Album {
	a := &Album{s: s, ID: s.id(), Owner: u, Type: sent.Type, shares: map[int64]*share{}, entries: map[int64]*entry{}}
	if a.key, _ = keys.SecretboxOpen(sent.EncryptedKey, sent.KeyDecryptionNonce, u.MasterKey); a.key == nil {
		a.key = s.random(32)
	}
	if name, err := keys.SecretboxOpen(sent.EncryptedName, sent.NameDecryptionNonce, a.key); err == nil {
		a.Name = string(name)
	}
	a.updated = s.now()
	s.collections[a.ID] = a
	s.up().albums[a.ID] = sent
	return a
}

// singleton is u's album of a per-user type, deleted or not; s.mu is held.
func (s *Server) singleton(u *User, typ string) *Album {
	for _, a := range s.collections {
		if a.Owner == u && a.Type == typ {
			return a
		}
	}
	return nil
}

// asSent replaces what the fake renders of an album made by POST
// /collections with what was sent, for its owner; s.mu is held.
func (s *Server) asSent(a *Album, u *User, c *apiclient.Collection) {
	up := s.upIfAny()
	if up == nil || a.Owner != u {
		return
	}
	if sent := up.albums[a.ID]; sent != nil {
		c.EncryptedKey, c.KeyDecryptionNonce = sent.EncryptedKey, sent.KeyDecryptionNonce
		c.EncryptedName, c.NameDecryptionNonce = sent.EncryptedName, sent.NameDecryptionNonce
		c.MagicMetadata = sent.MagicMetadata
	}
}

// getCollection answers GET /collections/{id}, which a restore reads
// before a commit (UP.5): the album as its owner or a current sharee sees
// it, deleted ones included; 404 for anyone else or no such album.
func (s *Server) getCollection(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.collections[id]
	if err != nil || a == nil {
		apiErr(w, 404, "", "")
		return
	}
	if sh := a.shares[u.ID]; a.Owner != u && (sh == nil || sh.removed) {
		apiErr(w, 404, "", "")
		return
	}
	c, _, _ := s.collectionFor(a, u)
	writeJSON(w, 200, map[string]any{"collection": c})
}

// addFiles answers POST /collections/add-files as museum does (UP.7):
// every field required (400); at most 1000 files (413); the album there,
// live and the caller's or shared to them as a collaborator (404, or 403
// for a viewer); the same id twice (400); every file the caller's (403
// when another user owns one, 400 when one does not exist); none in the
// trash (409 FILE_IN_TRASH). Files join with the key sent, as sent (junk
// too); a file already there, or removed earlier, keeps its old key and
// only comes back to life. Every entry added and the album get one new
// updationTime.
func (s *Server) addFiles(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	var in addFilesBody
	if status := in.read(r); status != 0 {
		apiErr(w, status, "", "")
		return
	}
	ids := make([]int64, len(in.Files))
	for i, f := range in.Files {
		ids[i] = f.ID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.collections[in.CollectionID]
	if status := s.mayAdd(u, a); status != 0 {
		apiErr(w, status, "", "")
		return
	}
	if status := s.owns(u, ids); status != 0 {
		apiErr(w, status, "", "")
		return
	}
	for _, id := range ids {
		if s.files[id].trashed {
			apiErr(w, 409, "FILE_IN_TRASH", "One or more files are in trash or have been deleted, please restore them first")
			return
		}
	}
	stamp := s.now()
	for _, f := range in.Files {
		e := a.entries[f.ID]
		if e == nil {
			e = &entry{file: s.files[f.ID]}
			e.encKey, _ = keys.DecodeB64(f.EncryptedKey)
			e.nonce, _ = keys.DecodeB64(f.KeyDecryptionNonce)
			a.entries[f.ID] = e
		}
		e.deleted, e.updated = false, stamp
	}
	a.updated = stamp
	w.WriteHeader(200)
}

// addFilesBody is the body of POST /collections/add-files.
type addFilesBody struct {
	CollectionID int64 `json:"collectionID"`
	Files        []struct {
		ID                 int64  `json:"id"`
		EncryptedKey       string `json:"encryptedKey"`
		KeyDecryptionNonce string `json:"keyDecryptionNonce"`
	} `json:"files"`
}

// read decodes the body and returns museum's status for one it refuses
// before looking at the album (0 for none): 400 for a missing field, 413
// for more than 1,000 files.
func (in *addFilesBody) read(r *http.Request) int {
	if !readJSON(r, in) || in.CollectionID == 0 || in.Files == nil {
		return 400
	}
	for _, f := range in.Files {
		if f.ID == 0 || f.EncryptedKey == "" || f.KeyDecryptionNonce == "" {
			return 400
		}
	}
	if len(in.Files) > 1000 {
		return 413
	}
	return 0
}

// mayAdd is museum's access check for adding to album a (UP.7); s.mu is
// held.
func (s *Server) mayAdd(u *User, a *Album) int {
	var sh *share
	if a != nil {
		sh = a.shares[u.ID]
	}
	switch {
	case a == nil, a.Owner != u && (sh == nil || sh.removed), a.deleted:
		return 404
	case a.Owner != u && sh.role != "COLLABORATOR" && sh.role != "ADMIN":
		return 403
	}
	return 0
}

// owns is museum's VerifyFileOwnership (UP.7): 400 for a repeated id or ids of
// no file at all or some missing, 403 when anyone else owns one; s.mu is
// held.
func (s *Server) owns(u *User, ids []int64) int {
	seen := map[int64]bool{}
	owners := map[*User]int{}
	for _, id := range ids {
		if seen[id] {
			return 400
		}
		seen[id] = true
		if f := s.files[id]; f != nil {
			owners[f.Owner]++
		}
	}
	switch {
	case len(owners) == 0:
		return 400
	case len(owners) > 1 || owners[u] == 0:
		return 403
	case owners[u] != len(ids):
		return 400
	}
	return 0
}
