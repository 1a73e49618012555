package enteapitest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
)

// commitBody is a POST /files body as museum binds it: strings, never
// decoded, so that junk is stored as it came (UP.4).
type commitBody struct {
	ID                 int64      `json:"id"`
	CollectionID       int64      `json:"collectionID"`
	EncryptedKey       string     `json:"encryptedKey"`
	KeyDecryptionNonce string     `json:"keyDecryptionNonce"`
	File               objectBody `json:"file"`
	Thumbnail          objectBody `json:"thumbnail"`
	Metadata           objectBody `json:"metadata"`
	MagicMetadata      *magicBody `json:"magicMetadata"`
	PubMagicMetadata   *magicBody `json:"pubMagicMetadata"`
}

type objectBody struct {
	ObjectKey        string `json:"objectKey,omitempty"`
	EncryptedData    string `json:"encryptedData,omitempty"`
	DecryptionHeader string `json:"decryptionHeader"`
	Size             int64  `json:"size"`
}

type magicBody struct {
	Version int    `json:"version"`
	Count   int    `json:"count"`
	Data    string `json:"data"`
	Header  string `json:"header"`
}

// bound reports whether gin's binding accepts b: every decryptionHeader,
// and every field of a magic metadata envelope, present (UP.3, UP.4).
func (b *commitBody) bound() bool {
	for _, m := range []*magicBody{b.MagicMetadata, b.PubMagicMetadata} {
		if m != nil && (m.Version == 0 || m.Count == 0 || m.Data == "" || m.Header == "") {
			return false
		}
	}
	return b.File.DecryptionHeader != "" && b.Thumbnail.DecryptionHeader != "" && b.Metadata.DecryptionHeader != ""
}

// commit is what POST /files stored for a file: the body's strings as
// sent and the objects' sizes as museum read them from the store.
type commit struct {
	body                commitBody
	owner               int64
	fileSize, thumbSize int64
}

// same is museum's duplicate test (onDuplicateObjectDetected, UP.5): the
// objects, their sizes and headers, the metadata and the owner. Album,
// file key and magic metadata are not compared.
func (c *commit) same(b *commitBody, owner, fileSize, thumbSize int64) bool {
	o := &c.body
	return o.Thumbnail.ObjectKey == b.Thumbnail.ObjectKey && c.thumbSize == thumbSize &&
		o.Thumbnail.DecryptionHeader == b.Thumbnail.DecryptionHeader &&
		o.File.ObjectKey == b.File.ObjectKey && c.fileSize == fileSize &&
		o.File.DecryptionHeader == b.File.DecryptionHeader &&
		o.Metadata.EncryptedData == b.Metadata.EncryptedData &&
		o.Metadata.DecryptionHeader == b.Metadata.DecryptionHeader && c.owner == owner
}

// createFile answers POST /files as museum's FileController.Create (UP.4),
// in its order: binding (400); both object keys the caller's and distinct,
// the file key there (400); the album there (404), the caller's (403), not
// deleted (404 COLLECTION_DELETED); both objects in the store, else 503
// OBJECT_SIZE_FETCH_FAILED at once (museum retries its HEADs for 1.5 s);
// the file at most 10 GiB (413); sizes sent, when not 0, equal to the
// stored ones (400); the plan, with both sizes (402/426, UP.10). Then
// objects already committed make it a repeat (UP.5): the same objects,
// headers, sizes and metadata answer 200 with the existing file's id, a
// fresh updationTime and nothing stored (not even in another album);
// anything else under them is 400. No crypto is checked.
func (s *Server) createFile(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	var in commitBody
	if !readJSON(r, &in) || !in.bound() || in.ID != 0 {
		// An id is PUT /files/update's business, which the fake leaves out.
		apiErr(w, 400, "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status, code := s.commitRefused(u, &in); status != 0 {
		apiErr(w, status, code, "")
		return
	}
	fo, to := s.objects[in.File.ObjectKey], s.objects[in.Thumbnail.ObjectKey]
	switch {
	case fo == nil || fo.lost || to == nil || to.lost:
		apiErr(w, 503, "OBJECT_SIZE_FETCH_FAILED", "")
		return
	case fo.size > MaxFileSize:
		apiErr(w, 413, "", "")
		return
	case in.File.Size != 0 && in.File.Size != fo.size, in.Thumbnail.Size != 0 && in.Thumbnail.Size != to.size:
		apiErr(w, 400, "", "")
		return
	}
	total := fo.size + to.size
	if status := s.canUpload(u, &total); status != 0 {
		refuseUpload(w, status)
		return
	}
	up := s.up()
	id, used := up.byObject[in.File.ObjectKey]
	if !used {
		id, used = up.byObject[in.Thumbnail.ObjectKey]
	}
	if used {
		if !up.commits[id].same(&in, u.ID, fo.size, to.size) {
			apiErr(w, 400, "", "")
			return
		}
		writeJSON(w, 200, committed(id, u, &in, fo.size, to.size, s.now()))
		return
	}
	f, stamp := s.storeCommit(u, &in, fo.size, to.size)
	writeJSON(w, 200, committed(f.ID, u, &in, fo.size, to.size, stamp))
}

// commitRefused is museum's validateFileCreateOrUpdateReq: a status and
// code, or 0; s.mu is held.
func (s *Server) commitRefused(u *User, in *commitBody) (int, string) {
	prefix := fmt.Sprintf("%d/", u.ID)
	a := s.collections[in.CollectionID]
	switch {
	case !strings.HasPrefix(in.File.ObjectKey, prefix) || !strings.HasPrefix(in.Thumbnail.ObjectKey, prefix),
		in.File.ObjectKey == in.Thumbnail.ObjectKey, in.EncryptedKey == "", in.KeyDecryptionNonce == "":
		return 400, ""
	case a == nil:
		return 404, ""
	case a.Owner != u:
		return 403, "" // a collaborator may add files, but not commit new ones there
	case a.deleted:
		return 404, "COLLECTION_DELETED"
	}
	return 0, ""
}

// storeCommit makes the file: its entry in the album, stamped now, the
// album's updationTime set to that stamp (UP.4); s.mu is held.
func (s *Server) storeCommit(u *User, in *commitBody, fileSize, thumbSize int64) (*File, int64) {
	dec := func(v string) []byte {
		b, _ := keys.DecodeB64(v) // junk is stored as nothing
		return b
	}
	f := &File{s: s, ID: s.id(), Owner: u,
		// files.info keeps the sizes at upload, even if a later PUT through
		// a plain URL changes the object (UP.2).
		spec:       FileSpec{AnnounceSize: fileSize},
		fileHeader: dec(in.File.DecryptionHeader), thumbHeader: dec(in.Thumbnail.DecryptionHeader),
		fileObject: in.File.ObjectKey, thumbObject: in.Thumbnail.ObjectKey,
		thumbInfo: thumbSize, thumbRecorded: thumbSize,
		metaEnc: dec(in.Metadata.EncryptedData), metaHeader: dec(in.Metadata.DecryptionHeader),
		pubMagic: in.PubMagicMetadata.decoded(dec),
	}
	s.files[f.ID] = f
	up := s.up()
	up.commits[f.ID] = &commit{body: *in, owner: u.ID, fileSize: fileSize, thumbSize: thumbSize}
	up.byObject[in.File.ObjectKey], up.byObject[in.Thumbnail.ObjectKey] = f.ID, f.ID
	if m := in.MagicMetadata.decoded(dec); m != nil {
		up.magic[f.ID] = m
	}
	a := s.collections[in.CollectionID]
	e := &entry{file: f, encKey: dec(in.EncryptedKey), nonce: dec(in.KeyDecryptionNonce), updated: s.now()}
	a.entries[f.ID] = e
	a.updated = e.updated
	return f, e.updated
}

func (m *magicBody) decoded(dec func(string) []byte) *apiclient.MagicMetadata {
	if m == nil {
		return nil
	}
	return &apiclient.MagicMetadata{Version: m.Version, Count: m.Count, Data: dec(m.Data), Header: dec(m.Header)}
}

// committed is museum's answer to POST /files: the body sent, with the id,
// owner, sizes, info and updationTime filled in.
func committed(id int64, u *User, in *commitBody, fileSize, thumbSize, stamp int64) map[string]any {
	obj := func(o objectBody, size int64) objectBody {
		o.Size = size
		return o
	}
	out := map[string]any{
		"id": id, "ownerID": u.ID, "collectionID": in.CollectionID, "collectionOwnerID": nil,
		"encryptedKey": in.EncryptedKey, "keyDecryptionNonce": in.KeyDecryptionNonce,
		"file": obj(in.File, fileSize), "thumbnail": obj(in.Thumbnail, thumbSize), "metadata": obj(in.Metadata, 0),
		"isDeleted": false, "updationTime": stamp, "info": apiclient.FileInfo{FileSize: fileSize, ThumbSize: thumbSize},
	}
	if in.MagicMetadata != nil {
		out["magicMetadata"] = in.MagicMetadata
	}
	if in.PubMagicMetadata != nil {
		out["pubMagicMetadata"] = in.PubMagicMetadata
	}
	return out
}

// ownerMagic is a file's private magic metadata as its owner reads it in a
// diff (UP.3); others never see it; s.mu is held.
func (s *Server) ownerMagic(f *File, u *User) *apiclient.MagicMetadata {
	up := s.upIfAny()
	if f.Owner != u || up == nil {
		return nil
	}
	return up.magic[f.ID]
}
