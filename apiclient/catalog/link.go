package catalog

import (
	"errors"
	"fmt"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
)

// ErrLinkKey reports that a public link's key does not open its album: the
// part after # was damaged, cut short or taken from another link.
var ErrLinkKey = errors.New("the part after # in the link does not open its album")

// OpenLinkAlbum decrypts the album of a public link with the link's key,
// the part after # (docs/protocol.md PL.7), in place of a key unwrapped
// with the account's. It checks the key on the album's name first: a key
// that does not open it is an error wrapping ErrLinkKey and
// errs.ErrCorrupted. An album old enough to have a plaintext name cannot be
// checked so; the first OpenItem then fails instead. A link's reader never
// sees the owner's visibility: it is always 0. Items open with OpenItem.
func OpenLinkAlbum(c *apiclient.Collection, key []byte) (*Album, error) {
	a := &Album{ID: c.ID, Name: c.Name, Type: c.Type, OwnerID: c.Owner.ID, OwnerEmail: c.Owner.Email,
		Deleted: c.IsDeleted, UpdationTime: c.UpdationTime, Key: key}
	if a.Name != "" {
		return a, nil
	}
	name, err := keys.SecretboxOpen(c.EncryptedName, c.NameDecryptionNonce, key)
	if err != nil {
		return nil, fmt.Errorf("album %d: %w: %w", c.ID, ErrLinkKey, err)
	}
	a.Name = string(name)
	return a, nil
}
