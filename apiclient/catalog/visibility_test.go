package catalog

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// openWithMagic seals a file entry whose private magic metadata holds
// fields (none when nil), and opens it.
func openWithMagic(t *testing.T, fields map[string]any) *Item {
	t.Helper()
	albumKey, err := keys.NewKey(rand.Reader)
	require.NoError(t, err)
	key, err := keys.NewKey(rand.Reader)
	require.NoError(t, err)
	box, nonce, err := keys.SecretboxSealFresh(rand.Reader, key, albumKey)
	require.NoError(t, err)
	md, mh, err := secretstream.EncryptBlob(rand.Reader, key, []byte(`{"title": "x.jpg", "fileType": 0}`))
	require.NoError(t, err)
	f := &apiclient.File{ID: 1, EncryptedKey: box, KeyDecryptionNonce: nonce,
		Metadata: apiclient.FileAttributes{EncryptedData: md, DecryptionHeader: mh}}
	if fields != nil {
		f.MagicMetadata, err = SealMagic(rand.Reader, key, 1, fields)
		require.NoError(t, err)
	}
	it, err := OpenItem(f, &Album{ID: 2, Key: albumKey})
	require.NoError(t, err)
	return it
}

func TestAnItemKnowsItsOwnersArchiveOrHide(t *testing.T) {
	assert.Equal(t, 1, openWithMagic(t, map[string]any{"visibility": 1}).Meta.Visibility)
	assert.Equal(t, 2, openWithMagic(t, map[string]any{"visibility": 2}).Meta.Visibility)
	assert.Zero(t, openWithMagic(t, map[string]any{"visibility": 0}).Meta.Visibility)
	assert.Zero(t, openWithMagic(t, map[string]any{"visibility": 3}).Meta.Visibility, "no visibility Ente knows")
	assert.Zero(t, openWithMagic(t, map[string]any{"visibility": -1}).Meta.Visibility)
	assert.Zero(t, openWithMagic(t, nil).Meta.Visibility, "a sharee's listing has none")
}
