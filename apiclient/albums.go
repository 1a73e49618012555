package apiclient

import (
	"context"
	"fmt"
)

// NewCollection is the body of POST /collections (UP.6): the album key
// sealed under the master key, the name sealed under the album key, its
// type (album, folder, favorites or uncategorized) and optional private
// magic metadata (the hidden album's subType and visibility).
type NewCollection struct {
	EncryptedKey        B64            `json:"encryptedKey"`
	KeyDecryptionNonce  B64            `json:"keyDecryptionNonce"`
	EncryptedName       B64            `json:"encryptedName,omitempty"`
	NameDecryptionNonce B64            `json:"nameDecryptionNonce,omitempty"`
	Type                string         `json:"type"`
	MagicMetadata       *MagicMetadata `json:"magicMetadata,omitempty"`
}

// CreateCollection creates an album (POST /collections). A second
// favorites or uncategorized album is not created: museum answers with
// the existing one and its existing key, so always open the key that comes
// back, never the one sent. It is NOT safe to repeat for other types: each
// call makes another album. A key or nonce of the wrong length, which
// museum answers with a 500 a retry would repeat, is refused before
// sending.
func (c *Client) CreateCollection(ctx context.Context, nc NewCollection) (*Collection, error) {
	switch {
	case len(nc.EncryptedKey) != sealedKeySize || len(nc.KeyDecryptionNonce) != nonceSize:
		return nil, fmt.Errorf("refusing to create an album: sealed key of %d bytes with a nonce of %d",
			len(nc.EncryptedKey), len(nc.KeyDecryptionNonce))
	case nc.Type != "album" && nc.Type != "folder" && nc.Type != "favorites" && nc.Type != "uncategorized":
		return nil, fmt.Errorf("refusing to create an album of type %q", nc.Type)
	}
	var out struct {
		Collection Collection `json:"collection"`
	}
	if err := c.do(ctx, "POST", "/collections", nil, nc, &out); err != nil {
		return nil, err
	}
	if out.Collection.ID <= 0 {
		return nil, fmt.Errorf("POST /collections: the answer has no album id")
	}
	return &out.Collection, nil
}

// CollectionFileItem is a file to add to an album: its id and its key
// sealed under the album's key.
type CollectionFileItem struct {
	ID                 int64 `json:"id"`
	EncryptedKey       B64   `json:"encryptedKey"`
	KeyDecryptionNonce B64   `json:"keyDecryptionNonce"`
}

// AddFiles adds files the caller owns to an album (POST
// /collections/add-files), at most MaxAddFiles at a time; none is no call.
// Safe to repeat: a file already in the album keeps the key it has (the
// one sent is dropped) and shows in the album's diff again (UP.7). museum
// refuses a file in the trash (409 FILE_IN_TRASH), one of another user's
// (403) and the same id twice (400).
func (c *Client) AddFiles(ctx context.Context, collectionID int64, files []CollectionFileItem) error {
	if len(files) == 0 {
		return nil
	}
	if len(files) > MaxAddFiles {
		return fmt.Errorf("adding %d files to album %d: at most %d a call", len(files), collectionID, MaxAddFiles)
	}
	in := map[string]any{"collectionID": collectionID, "files": files}
	return c.do(ctx, "POST", "/collections/add-files", nil, in, nil)
}
