package enteapitest

import (
	"net/http"
	"sync"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
	"github.com/quak-photos/quak/apiclient/keys"
)

// The /collections and /trash routes: albums, their diffs and entries,
// making albums and adding files to them.

func (s *Server) collectionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /collections/v2", s.authed(s.listCollections))
	mux.HandleFunc("GET /collections/v2/diff", s.authed(s.diff))
	mux.HandleFunc("GET /collections/file", s.authed(s.collectionFile))
	mux.HandleFunc("GET /collections/{id}", s.authed(s.getCollection))
	mux.HandleFunc("POST /collections", s.authed(s.createCollection))
	mux.HandleFunc("POST /collections/add-files", s.authed(s.addFiles))
	mux.HandleFunc("GET /trash/v2/diff", s.authed(s.trashDiff))
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request, u *User) {
	since, _ := qint(r, "sinceTime")
	out := []wire.Collection{}
	for _, c := range s.m.Collections(u, since) {
		out = append(out, collectionJSON(c))
	}
	writeJSON(w, 200, map[string]any{"collections": out})
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request, u *User) {
	id, _ := qint(r, "collectionID")
	since, _ := qint(r, "sinceTime")
	page, more, err := s.m.Diff(u, id, since)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, wire.Diff{Diff: s.tamper.apply(id, filesJSON(page)), HasMore: more})
}

// tamper is a test's rewrite of every diff page.
type tamper struct {
	mu sync.Mutex
	fn func(collectionID int64, page []wire.File) []wire.File
}

// apply rewrites page as the test asked, if it did.
func (t *tamper) apply(collectionID int64, page []wire.File) []wire.File {
	t.mu.Lock()
	fn := t.fn
	t.mu.Unlock()
	if fn == nil {
		return page
	}
	return fn(collectionID, page)
}

// TamperDiff has fn rewrite every diff page before it is sent, as a
// hostile or broken server might (say, listing a file twice); nil stops it.
// The page is museum's JSON (package wire).
func (s *Server) TamperDiff(fn func(collectionID int64, page []wire.File) []wire.File) {
	s.tamper.mu.Lock()
	defer s.tamper.mu.Unlock()
	s.tamper.fn = fn
}

func (s *Server) collectionFile(w http.ResponseWriter, r *http.Request, u *User) {
	cid, _ := qint(r, "collectionID")
	fid, _ := qint(r, "fileID")
	e, err := s.m.CollectionFile(u, cid, fid)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]wire.File{"file": fileJSON(e)})
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request, u *User) {
	id, ok := pathID(r)
	c, err := s.m.Collection(u, id)
	if !ok {
		err = &model.Refusal{Kind: model.NotFound}
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]wire.Collection{"collection": collectionJSON(c)})
}

func (s *Server) trashDiff(w http.ResponseWriter, r *http.Request, u *User) {
	since, _ := qint(r, "sinceTime")
	items := []wire.Trash{}
	for _, t := range s.m.TrashDiff(u, since) {
		items = append(items, wire.Trash{File: wire.File{ID: t.FileID, CollectionID: t.CollectionID}, UpdatedAt: t.UpdatedAt})
	}
	writeJSON(w, 200, wire.TrashDiff{Diff: items})
}

// createCollection answers POST /collections (UP.6): encryptedKey,
// keyDecryptionNonce and type required (400), a magic metadata envelope
// with all four fields (400); then the model's rules.
func (s *Server) createCollection(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		EncryptedKey        string              `json:"encryptedKey"`
		KeyDecryptionNonce  string              `json:"keyDecryptionNonce"`
		EncryptedName       string              `json:"encryptedName"`
		NameDecryptionNonce string              `json:"nameDecryptionNonce"`
		Type                string              `json:"type"`
		MagicMetadata       *wire.MagicMetadata `json:"magicMetadata"`
	}
	if !readJSON(r, &in) || in.EncryptedKey == "" || in.KeyDecryptionNonce == "" || in.Type == "" {
		writeJSON(w, 400, struct{}{})
		return
	}
	mm := sentMagic(in.MagicMetadata)
	if !mm.Bound() {
		writeJSON(w, 400, struct{}{})
		return
	}
	var magic *model.Magic
	if mm != nil {
		magic = &model.Magic{Version: mm.Version, Count: mm.Count, Data: lenient(mm.Data), Header: lenient(mm.Header)}
	}
	c, err := s.m.CreateCollection(u, model.NewAlbum{EncryptedKey: unb64(in.EncryptedKey),
		KeyDecryptionNonce: unb64(in.KeyDecryptionNonce), EncryptedName: lenient(in.EncryptedName),
		NameDecryptionNonce: lenient(in.NameDecryptionNonce), Type: in.Type, MagicMetadata: magic})
	if err != nil {
		writeErr(w, err)
		return
	}
	// museum answers with the collection as made, before any share or
	// link: sharees and publicURLs null, where its listings send [].
	col := collectionJSON(c)
	col.Sharees, col.PublicURLs = nil, nil
	writeJSON(w, 200, map[string]wire.Collection{"collection": col})
}

// lenient reads base64 as the client's, any alphabet, padded or not;
// junk reads as nothing.
func lenient(s string) []byte {
	b, _ := keys.DecodeB64(s)
	return b
}

// sentMagic is an envelope as sent.
func sentMagic(m *wire.MagicMetadata) *model.SentMagic {
	if m == nil {
		return nil
	}
	return &model.SentMagic{Version: m.Version, Count: m.Count, Data: m.Data, Header: m.Header}
}

// addFiles answers POST /collections/add-files (UP.7): every field
// required (400); then the model's rules.
func (s *Server) addFiles(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		CollectionID int64                     `json:"collectionID"`
		Files        []wire.CollectionFileItem `json:"files"`
	}
	if !readJSON(r, &in) || in.CollectionID == 0 || in.Files == nil {
		writeJSON(w, 400, struct{}{})
		return
	}
	items := make([]model.AddItem, len(in.Files))
	for i, f := range in.Files {
		if f.ID == 0 || f.EncryptedKey == "" || f.KeyDecryptionNonce == "" {
			writeJSON(w, 400, struct{}{})
			return
		}
		items[i] = model.AddItem{ID: f.ID, EncryptedKey: f.EncryptedKey, KeyDecryptionNonce: f.KeyDecryptionNonce}
	}
	if err := s.m.AddFiles(u, in.CollectionID, items); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(200)
}
