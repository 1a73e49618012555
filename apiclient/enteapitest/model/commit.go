package model

import (
	"fmt"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
)

// NewFile is a POST /files body as museum binds it: strings, never
// decoded, so that junk is stored as it came (UP.4).
type NewFile struct {
	CollectionID                     int64
	EncryptedKey, KeyDecryptionNonce string
	File, Thumbnail                  UploadedPart
	Metadata                         UploadedPart
	MagicMetadata, PubMagicMetadata  *SentMagic
}

// UploadedPart is one part of a NewFile: its object (none for the
// metadata), its sealed data (the metadata only), header and size.
type UploadedPart struct {
	ObjectKey, EncryptedData, DecryptionHeader string
	Size                                       int64
}

// SentMagic is a magic metadata envelope as sent.
type SentMagic struct {
	Version, Count int
	Data, Header   string
}

// Bound reports whether gin's binding accepts b: every decryptionHeader,
// and every field of a magic metadata envelope, present (UP.3, UP.4).
func (b *NewFile) Bound() bool {
	for _, m := range []*SentMagic{b.MagicMetadata, b.PubMagicMetadata} {
		if !m.Bound() {
			return false
		}
	}
	return b.File.DecryptionHeader != "" && b.Thumbnail.DecryptionHeader != "" && b.Metadata.DecryptionHeader != ""
}

// Bound reports whether gin's binding accepts an envelope: none, or one
// with every field.
func (s *SentMagic) Bound() bool {
	return s == nil || (s.Version != 0 && s.Count != 0 && s.Data != "" && s.Header != "")
}

// decoded is the envelope's bytes; junk is stored as nothing.
func (s *SentMagic) decoded() *Magic {
	if s == nil {
		return nil
	}
	return &Magic{Version: s.Version, Count: s.Count, Data: dec(s.Data), Header: dec(s.Header)}
}

// dec reads base64 as museum's clients write it; junk reads as nothing.
func dec(v string) []byte {
	b, _ := keys.DecodeB64(v)
	return b
}

// commit is what POST /files stored for a file: the body's strings as
// sent and the objects' sizes as museum read them from the store.
type commit struct {
	body                NewFile
	owner               int64
	fileSize, thumbSize int64
}

// same is museum's duplicate test (onDuplicateObjectDetected, UP.5): the
// objects, their sizes and headers, the metadata and the owner. Album,
// file key and magic metadata are not compared.
func (c *commit) same(b *NewFile, owner, fileSize, thumbSize int64) bool {
	o := &c.body
	return o.Thumbnail.ObjectKey == b.Thumbnail.ObjectKey && c.thumbSize == thumbSize &&
		o.Thumbnail.DecryptionHeader == b.Thumbnail.DecryptionHeader &&
		o.File.ObjectKey == b.File.ObjectKey && c.fileSize == fileSize &&
		o.File.DecryptionHeader == b.File.DecryptionHeader &&
		o.Metadata.EncryptedData == b.Metadata.EncryptedData &&
		o.Metadata.DecryptionHeader == b.Metadata.DecryptionHeader && c.owner == owner
}

// Committed is what museum answers a commit with, besides the body sent:
// the file's id, the sizes it read and the updationTime.
type Committed struct {
	ID                  int64
	FileSize, ThumbSize int64
	UpdationTime        int64
}

// CreateFile answers POST /files for a bound body, as museum's
// FileController.Create (UP.4), in its order: both object keys u's and
// distinct, the file key there (400); the album there (404), u's (403),
// not deleted (404 COLLECTION_DELETED); both objects in the store, else
// 503 OBJECT_SIZE_FETCH_FAILED at once (museum retries its HEADs for 1.5
// s); the file at most 10 GiB (413); sizes sent, when not 0, equal to the
// stored ones (400); the plan, with both sizes (402/426, UP.10). Then
// objects already committed make it a repeat (UP.5): the same objects,
// headers, sizes and metadata answer with the existing file's id, a fresh
// updationTime and nothing stored (not even in another album); anything
// else under them is 400. No crypto is checked.
func (m *Museum) CreateFile(u *User, in *NewFile) (Committed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.commitRefused(u, in); err != nil {
		return Committed{}, err
	}
	fo, to := m.store.objects[in.File.ObjectKey], m.store.objects[in.Thumbnail.ObjectKey]
	switch {
	case fo == nil || fo.lost || to == nil || to.lost:
		return Committed{}, refuse(Unavailable, "OBJECT_SIZE_FETCH_FAILED", "")
	case fo.size > MaxFileSize:
		return Committed{}, plain(TooLarge)
	case in.File.Size != 0 && in.File.Size != fo.size, in.Thumbnail.Size != 0 && in.Thumbnail.Size != to.size:
		return Committed{}, plain(BadRequest)
	}
	total := fo.size + to.size
	if err := m.canUpload(u, &total); err != nil {
		return Committed{}, err
	}
	id, used := m.up.byObject[in.File.ObjectKey]
	if !used {
		id, used = m.up.byObject[in.Thumbnail.ObjectKey]
	}
	if used {
		if !m.up.commits[id].same(in, u.ID, fo.size, to.size) {
			return Committed{}, plain(BadRequest)
		}
		return Committed{ID: id, FileSize: fo.size, ThumbSize: to.size, UpdationTime: m.tick()}, nil
	}
	f, stamp := m.storeCommit(u, in, fo.size, to.size)
	return Committed{ID: f.ID, FileSize: fo.size, ThumbSize: to.size, UpdationTime: stamp}, nil
}

// commitRefused is museum's validateFileCreateOrUpdateReq; m.mu is held.
func (m *Museum) commitRefused(u *User, in *NewFile) error {
	prefix := fmt.Sprintf("%d/", u.ID)
	a := m.albums[in.CollectionID]
	switch {
	case !strings.HasPrefix(in.File.ObjectKey, prefix) || !strings.HasPrefix(in.Thumbnail.ObjectKey, prefix),
		in.File.ObjectKey == in.Thumbnail.ObjectKey, in.EncryptedKey == "", in.KeyDecryptionNonce == "":
		return plain(BadRequest)
	case a == nil:
		return plain(NotFound)
	case a.Owner != u:
		return plain(Forbidden) // a collaborator may add files, but not commit new ones there
	case a.deleted:
		return refuse(NotFound, "COLLECTION_DELETED", "")
	}
	return nil
}

// storeCommit makes the file: its entry in the album, stamped now, the
// album's updationTime set to that stamp (UP.4); m.mu is held.
func (m *Museum) storeCommit(u *User, in *NewFile, fileSize, thumbSize int64) (*File, int64) {
	f := &File{m: m, ID: m.id(), Owner: u,
		// files.info keeps the sizes at upload, even if a later PUT through
		// a plain URL changes the object (UP.2).
		spec:    FileSpec{AnnounceSize: fileSize},
		content: part{object: in.File.ObjectKey, header: dec(in.File.DecryptionHeader)},
		thumb: thumbPart{part: part{object: in.Thumbnail.ObjectKey, header: dec(in.Thumbnail.DecryptionHeader)},
			info: thumbSize, recorded: thumbSize},
		meta: sealedMeta{data: dec(in.Metadata.EncryptedData), header: dec(in.Metadata.DecryptionHeader),
			pub: in.PubMagicMetadata.decoded()},
	}
	m.files[f.ID] = f
	m.up.commits[f.ID] = &commit{body: *in, owner: u.ID, fileSize: fileSize, thumbSize: thumbSize}
	m.up.byObject[in.File.ObjectKey], m.up.byObject[in.Thumbnail.ObjectKey] = f.ID, f.ID
	if mm := in.MagicMetadata.decoded(); mm != nil {
		m.up.magic[f.ID] = mm
	}
	a := m.albums[in.CollectionID]
	now := m.tick()
	a.entries[f.ID] = &entry{file: f, encKey: dec(in.EncryptedKey), nonce: dec(in.KeyDecryptionNonce), added: now, updated: now}
	a.updated = now
	return f, now
}
