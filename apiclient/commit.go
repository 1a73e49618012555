package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// NewFile is the body of POST /files, which commits an uploaded file into
// an album the caller owns (UP.4). Its JSON is always the same bytes for
// the same NewFile (fields in a fixed order, standard padded base64), so a
// restore stores Body's bytes before sending them and resends exactly
// those after a lost answer.
type NewFile struct {
	CollectionID int64 `json:"collectionID"`
	// EncryptedKey and KeyDecryptionNonce are the file key sealed under
	// the album's key (48 and 24 bytes).
	EncryptedKey       B64            `json:"encryptedKey"`
	KeyDecryptionNonce B64            `json:"keyDecryptionNonce"`
	File               UploadedObject `json:"file"`
	Thumbnail          UploadedObject `json:"thumbnail"`
	Metadata           SealedMetadata `json:"metadata"`
	PubMagicMetadata   *MagicMetadata `json:"pubMagicMetadata,omitempty"`
	MagicMetadata      *MagicMetadata `json:"magicMetadata,omitempty"`
}

// UploadedObject is an uploaded ciphertext: its key in the store, the
// header it was encrypted with, and its length, which museum compares with
// the stored object's.
type UploadedObject struct {
	ObjectKey        string `json:"objectKey"`
	DecryptionHeader B64    `json:"decryptionHeader"`
	Size             int64  `json:"size"`
}

// SealedMetadata is the file's metadata JSON as a blob under the file key.
type SealedMetadata struct {
	EncryptedData    B64 `json:"encryptedData"`
	DecryptionHeader B64 `json:"decryptionHeader"`
}

// Sizes that NewFile.Validate checks.
const (
	sealedKeySize = 48 // a 32-byte key in a secretbox
	nonceSize     = 24
	headerSize    = 24 // a secretstream header
	minBlob       = 17 // an empty blob: tag byte and MAC
)

// ErrBadCommit reports a commit body quak refuses to send: museum checks
// none of the crypto and would keep whatever arrives for good (UP.4).
var ErrBadCommit = errors.New("refusing to commit a malformed file")

// Validate checks what museum does not: that every key, nonce and header
// has its length, the two objects are distinct and not empty, and the
// metadata is there. Errors wrap ErrBadCommit.
func (n *NewFile) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadCommit, fmt.Sprintf(format, a...))
	}
	switch {
	case n.CollectionID <= 0:
		return bad("album %d", n.CollectionID)
	case len(n.EncryptedKey) != sealedKeySize || len(n.KeyDecryptionNonce) != nonceSize:
		return bad("sealed file key of %d bytes with a nonce of %d", len(n.EncryptedKey), len(n.KeyDecryptionNonce))
	case n.File.ObjectKey == "" || n.Thumbnail.ObjectKey == "" || n.File.ObjectKey == n.Thumbnail.ObjectKey:
		return bad("the file and its thumbnail need two distinct objects")
	case len(n.Metadata.EncryptedData) < minBlob || len(n.Metadata.DecryptionHeader) != headerSize:
		return bad("metadata of %d bytes with a header of %d", len(n.Metadata.EncryptedData), len(n.Metadata.DecryptionHeader))
	}
	for _, o := range []struct {
		what string
		obj  UploadedObject
	}{{"file", n.File}, {"thumbnail", n.Thumbnail}} {
		if len(o.obj.DecryptionHeader) != headerSize || o.obj.Size < minBlob {
			return bad("%s of %d bytes with a header of %d", o.what, o.obj.Size, len(o.obj.DecryptionHeader))
		}
	}
	for _, m := range []struct {
		what string
		mm   *MagicMetadata
	}{{"public magic metadata", n.PubMagicMetadata}, {"magic metadata", n.MagicMetadata}} {
		if m.mm != nil && (m.mm.Version < 1 || m.mm.Count < 1 || len(m.mm.Data) < minBlob || len(m.mm.Header) != headerSize) {
			return bad("%s version %d, count %d, %d bytes with a header of %d", m.what, m.mm.Version, m.mm.Count, len(m.mm.Data), len(m.mm.Header))
		}
	}
	return nil
}

// Body validates n and returns the bytes to store and send.
func (n *NewFile) Body() ([]byte, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(n)
}

// CreateFile commits an uploaded file (POST /files) with body, the bytes
// of NewFile.Body as stored. The same bytes sent again after a lost answer
// give back the same file and add nothing (UP.5); a body that reuses the
// objects with other metadata gets 400. It is NOT safe to rebuild the
// body and send that: new headers or keys under the same objects are
// refused, and new objects make a second file. Before sending, it refuses
// a body that does not read back as a valid NewFile (ErrBadCommit). museum
// answers 503 OBJECT_SIZE_FETCH_FAILED when an object is not in the store
// (a multipart upload not completed), 402/426 when the account is out of
// storage, 413 beyond MaxObjectSize.
func (c *Client) CreateFile(ctx context.Context, body []byte) (*File, error) {
	var n NewFile
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCommit, err)
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	var out File
	if err := c.doJSON(ctx, "POST", "/files", nil, body, &out); err != nil {
		return nil, err
	}
	if out.ID <= 0 {
		return nil, errors.New("POST /files: the answer has no file id")
	}
	return &out, nil
}
