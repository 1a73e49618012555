package enteapitest

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/secretstream"
)

func qint(r *http.Request, name string) (int64, bool) {
	v, err := strconv.ParseInt(r.URL.Query().Get(name), 10, 64)
	return v, err == nil
}

// collectionFor renders album a as user u sees it, and whether u sees it at
// all; s.mu is held.
func (s *Server) collectionFor(a *Album, u *User) (apiclient.Collection, int64, bool) {
	c := apiclient.Collection{ID: a.ID, Type: a.Type, UpdationTime: a.updated, IsDeleted: a.deleted}
	nonce := s.random(24)
	c.EncryptedName = keys.SecretboxSeal([]byte(a.Name), nonce, a.key)
	c.NameDecryptionNonce = nonce
	changed := a.updated
	if a.Owner == u {
		kn := s.random(24)
		c.Owner = apiclient.CollectionUser{ID: u.ID}
		c.EncryptedKey = keys.SecretboxSeal(a.key, kn, u.MasterKey)
		c.KeyDecryptionNonce = kn
		c.MagicMetadata = s.collectionMagic(a, a.visibility)
	} else {
		sh := a.shares[u.ID]
		if sh == nil || a.Owner.gone {
			return c, 0, false
		}
		c.Owner = apiclient.CollectionUser{ID: a.Owner.ID, Email: a.Owner.Email}
		c.EncryptedKey = sh.sealedKey
		c.IsDeleted = a.deleted || sh.removed
		c.SharedMagicMetadata = s.collectionMagic(a, sh.visibility)
		changed = max(changed, sh.updated)
		c.UpdationTime = changed
	}
	s.asSent(a, u, &c)
	for _, sh := range a.shares {
		if !sh.removed {
			c.Sharees = append(c.Sharees, apiclient.CollectionUser{ID: sh.user.ID, Email: sh.user.Email, Role: sh.role})
		}
	}
	return c, changed, true
}

func (s *Server) collectionMagic(a *Album, visibility int) *apiclient.MagicMetadata {
	if visibility == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]int{"visibility": visibility})
	h := s.random(secretstream.HeaderSize)
	return &apiclient.MagicMetadata{Version: 1, Count: 1, Data: mustSeal(a.key, h, b), Header: h}
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	since, _ := qint(r, "sinceTime")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []apiclient.Collection{}
	for _, a := range s.collections {
		if c, changed, ok := s.collectionFor(a, u); ok && changed > since {
			out = append(out, c)
		}
	}
	// museum promises no order; newest id first catches "take the last".
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	writeJSON(w, 200, map[string]any{"collections": out})
}

// readable returns album id if u may read its diff; s.mu is held.
func (s *Server) readable(u *User, id int64) *Album {
	a := s.collections[id]
	if a == nil || a.deleted {
		return nil
	}
	if a.Owner == u {
		return a
	}
	if sh := a.shares[u.ID]; sh != nil && !sh.removed && !a.Owner.gone {
		return a
	}
	return nil
}

// fileFor renders one album entry; s.mu is held.
func (s *Server) fileFor(a *Album, e *entry, u *User) apiclient.File {
	f := e.file
	out := apiclient.File{ID: f.ID, OwnerID: f.Owner.ID, CollectionID: a.ID, CollectionOwnerID: a.Owner.ID,
		UpdationTime: e.updated, IsDeleted: e.deleted}
	if e.deleted {
		// museum scrubs deleted entries; "-" is not base64 and reads as empty.
		scrub := apiclient.B64(nil)
		out.EncryptedKey, out.KeyDecryptionNonce = scrub, scrub
		return out
	}
	out.EncryptedKey, out.KeyDecryptionNonce = e.encKey, e.nonce
	out.File = apiclient.FileAttributes{DecryptionHeader: f.fileHeader}
	out.Thumbnail = apiclient.FileAttributes{DecryptionHeader: f.thumbHeader}
	out.Metadata = apiclient.FileAttributes{EncryptedData: f.metaEnc, DecryptionHeader: f.metaHeader}
	out.PubMagicMetadata = f.pubMagic
	out.MagicMetadata = s.ownerMagic(f, u)
	info := &apiclient.FileInfo{FileSize: s.objects[f.fileObject].size}
	if f.spec.AnnounceSize != 0 {
		info.FileSize = f.spec.AnnounceSize
	}
	if f.thumbObject != "" {
		info.ThumbSize = f.thumbInfo
	}
	if !f.infoNull {
		out.Info = info
	}
	return out
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	id, _ := qint(r, "collectionID")
	since, _ := qint(r, "sinceTime")
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.readable(u, id)
	if a == nil {
		apiErr(w, 404, "", "")
		return
	}
	es, more := s.diffPage(a, since)
	page := make([]apiclient.File, 0, len(es))
	for _, e := range es {
		page = append(page, s.fileFor(a, e, u))
	}
	if s.tamperDiff != nil {
		page = s.tamperDiff(a.ID, page)
	}
	a.touchIfEndless(es)
	writeJSON(w, 200, apiclient.DiffPage{Diff: page, HasMore: more || a.neverEnding})
}

// TamperDiff has fn rewrite every diff page before it is sent, as a
// hostile or broken server might (say, listing a file twice); nil stops it.
// fn runs with the server's lock held and must not call its methods.
func (s *Server) TamperDiff(fn func(collectionID int64, page []apiclient.File) []apiclient.File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tamperDiff = fn
}

func (s *Server) collectionFile(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	cid, _ := qint(r, "collectionID")
	fid, _ := qint(r, "fileID")
	s.mu.Lock()
	defer s.mu.Unlock()
	// museum's order (CollectionController.GetFile): no entry at all is 404;
	// someone else's file needs a live share of the album to the caller,
	// else 403 (so a collaborator's file in the caller's own album is 403
	// too); a deleted entry is 404. The album itself is not checked.
	a := s.collections[cid]
	var e *entry
	if a != nil {
		e = a.entries[fid]
	}
	if e == nil {
		apiErr(w, 404, "FILE_NOT_FOUND_IN_ALBUM", "file not found in album")
		return
	}
	if sh := a.shares[u.ID]; e.file.Owner != u && (sh == nil || sh.removed) {
		apiErr(w, 403, "", "")
		return
	}
	if e.deleted {
		apiErr(w, 404, "FILE_NOT_FOUND_IN_ALBUM", "file not found in album")
		return
	}
	writeJSON(w, 200, map[string]any{"file": s.fileFor(a, e, u)})
}

func (s *Server) trashDiff(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	since, _ := qint(r, "sinceTime")
	s.mu.Lock()
	defer s.mu.Unlock()
	items := []apiclient.TrashItem{}
	for _, a := range s.collections {
		for _, e := range a.entries {
			if e.file.Owner == u && e.file.trashed && e.updated > since {
				items = append(items, apiclient.TrashItem{File: apiclient.File{ID: e.file.ID, CollectionID: a.ID}, UpdatedAt: e.updated})
			}
		}
	}
	writeJSON(w, 200, apiclient.TrashPage{Diff: items})
}

// filesInfo answers POST /files/info as museum does (FileController.
// GetFileInfo, repo.VerifyFileOwner): the whole batch fails when one id is
// not the caller's (403), or is missing or repeated (400, since museum
// compares a row count with the number of ids); an empty list is 400. The
// sizes are files.info's, as recorded at upload.
func (s *Server) filesInfo(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	var in struct {
		FileIDs []int64 `json:"fileIDs"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	owners := map[*User]int{}
	seen := map[int64]bool{}
	for _, id := range in.FileIDs {
		if f := s.files[id]; f != nil && !seen[id] {
			owners[f.Owner]++
		}
		seen[id] = true
	}
	switch {
	case len(owners) == 0:
		apiErr(w, 400, "BAD_REQUEST", "")
		return
	case len(owners) > 1 || owners[u] == 0:
		apiErr(w, 403, "", "")
		return
	case owners[u] != len(in.FileIDs):
		apiErr(w, 400, "BAD_REQUEST", "")
		return
	}
	type fi struct {
		ID       int64              `json:"id"`
		FileInfo apiclient.FileInfo `json:"fileInfo"`
	}
	out := []fi{}
	for _, id := range in.FileIDs {
		f := s.files[id]
		if f.infoNull {
			// Read from object_keys and written into files.info.
			f.infoNull, f.thumbInfo = false, f.thumbRecorded
		}
		info := apiclient.FileInfo{FileSize: s.objects[f.fileObject].size, ThumbSize: -1}
		if f.thumbObject != "" {
			info.ThumbSize = f.thumbInfo
		}
		out = append(out, fi{id, info})
	}
	writeJSON(w, 200, map[string]any{"filesInfo": out})
}

// largeThumbnails answers GET /files/large-thumbnails?threshold=N: the
// caller's files whose thumbnail object, as object_keys records it, is at
// least N bytes (repo.GetLargeThumbnailFiles); a missing threshold is 0.
func (s *Server) largeThumbnails(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	threshold, _ := qint(r, "threshold")
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := []int64{}
	for id, f := range s.files {
		if f.Owner == u && f.thumbObject != "" && f.thumbRecorded >= threshold {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	writeJSON(w, 200, map[string]any{"largeThumbnailFiles": ids})
}

// diffPage is the next page of album a's entries changed after since, in
// museum's order (updationTime, then id), and whether more follow. A page
// never splits one updationTime. s.mu is held.
func (s *Server) diffPage(a *Album, since int64) (page []*entry, more bool) {
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
	n := min(s.cfg.PageSize, len(es))
	for n > 0 && n < len(es) && es[n].updated == es[n-1].updated {
		n++
	}
	return es[:n], n < len(es)
}

// endlessPages is how long an endless album's listing goes on: far past
// any client's cap, yet it ends, so a client without one fails its test
// in seconds instead of hanging it.
const endlessPages = 2000

// touchIfEndless changes the entries just served again, for an endless
// album: its listing goes on advancing, for endlessPages pages. s.mu is
// held.
func (a *Album) touchIfEndless(es []*entry) {
	if !a.endless {
		return
	}
	a.endlessServed++
	if a.endlessServed >= endlessPages {
		a.endless, a.neverEnding = false, false
		return
	}
	for _, e := range es {
		e.updated = a.s.now()
	}
}
