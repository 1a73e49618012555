package catalog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// counter is a deterministic random source: 0, 1, 2, …
type counter struct{ n byte }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.n
		c.n++
	}
	return len(p), nil
}

// What SealMagic, EncryptBlob and SecretboxSealFresh make is what OpenAlbum
// and OpenItem read: a file as a restore would send it, opened as a backup
// reads it.
func TestSealedPiecesOpen(t *testing.T) {
	rnd := &counter{}
	master, err := keys.NewKey(rnd)
	require.NoError(t, err)
	albumKey, err := keys.NewKey(rnd)
	require.NoError(t, err)
	encKey, keyNonce, err := keys.SecretboxSealFresh(rnd, albumKey, master)
	require.NoError(t, err)
	encName, nameNonce, err := keys.SecretboxSealFresh(rnd, []byte("Holidays"), albumKey)
	require.NoError(t, err)
	amagic, err := SealMagic(rnd, albumKey, 1, map[string]any{"subType": 1, "visibility": 2})
	require.NoError(t, err)
	c := apiclient.Collection{ID: 7, Owner: apiclient.CollectionUser{ID: 1}, EncryptedKey: encKey, KeyDecryptionNonce: keyNonce,
		EncryptedName: encName, NameDecryptionNonce: nameNonce, Type: "album", MagicMetadata: amagic}
	a, err := OpenAlbum(&c, Keys{UserID: 1, MasterKey: master})
	require.NoError(t, err)
	assert.Equal(t, "Holidays", a.Name)
	assert.Equal(t, 2, a.Visibility)
	assert.Equal(t, albumKey, a.Key)

	fileKey, err := keys.NewKey(rnd)
	require.NoError(t, err)
	fkey, fnonce, err := keys.SecretboxSealFresh(rnd, fileKey, albumKey)
	require.NoError(t, err)
	md, _ := json.Marshal(map[string]any{"fileType": 0, "title": "IMG_1.jpg", "creationTime": 100, "modificationTime": 200, "hash": "aGFzaA=="})
	encMD, mdHeader, err := secretstream.EncryptBlob(rnd, fileKey, md)
	require.NoError(t, err)
	pub, err := SealMagic(rnd, fileKey, 1, map[string]any{"caption": "at the beach", "editedName": "beach.jpg", "w": nil})
	require.NoError(t, err)
	assert.Equal(t, 2, pub.Count, "a null field is left out and not counted")
	assert.Equal(t, 1, pub.Version)
	f := apiclient.File{ID: 9, EncryptedKey: fkey, KeyDecryptionNonce: fnonce,
		File:     apiclient.FileAttributes{DecryptionHeader: make([]byte, secretstream.HeaderSize)},
		Metadata: apiclient.FileAttributes{EncryptedData: encMD, DecryptionHeader: mdHeader}, PubMagicMetadata: pub}
	it, err := OpenItem(&f, a)
	require.NoError(t, err)
	assert.Equal(t, fileKey, it.Key)
	assert.Equal(t, "beach.jpg", it.Meta.Title)
	assert.Equal(t, "at the beach", it.Meta.Caption)
	assert.Equal(t, int64(200), it.Meta.ModificationTime)

	plain, err := secretstream.OpenBlob(fileKey, pub.Header, pub.Data)
	require.NoError(t, err)
	assert.JSONEq(t, `{"caption":"at the beach","editedName":"beach.jpg"}`, string(plain))
}

func TestSealMagicOfNothingIsNoEnvelope(t *testing.T) {
	key := bytes.Repeat([]byte{1}, keys.KeySize)
	var nilPtr *int
	mm, err := SealMagic(&counter{}, key, 1, map[string]any{"caption": nil, "w": nilPtr})
	require.NoError(t, err)
	assert.Nil(t, mm, "count 0 is refused by museum: no envelope")
	mm, err = SealMagic(&counter{}, key, 1, nil)
	require.NoError(t, err)
	assert.Nil(t, mm)
}

func TestSealMagicIsDeterministicAndChecked(t *testing.T) {
	key := bytes.Repeat([]byte{1}, keys.KeySize)
	fields := map[string]any{"w": 4000, "h": 3000, "caption": "x", "dateTime": "2024-01-02T03:04:05"}
	a, err := SealMagic(&counter{}, key, 1, fields)
	require.NoError(t, err)
	b, err := SealMagic(&counter{}, key, 1, fields)
	require.NoError(t, err)
	assert.Equal(t, a, b, "the same fields and random bytes seal to the same envelope")
	assert.Equal(t, 4, a.Count)

	_, err = SealMagic(&counter{}, key, 0, fields)
	assert.Error(t, err, "version 0")
	_, err = SealMagic(&counter{}, key, 1, map[string]any{"bad": func() {}})
	assert.Error(t, err, "a value JSON cannot hold")
	_, err = SealMagic(&counter{}, key[:5], 1, fields)
	assert.Error(t, err, "a short key")
}
