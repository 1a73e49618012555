package keys

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
)

// With a vector's nonce as the random source, the box is libsodium's.
func TestSecretboxSealFreshMatchesLibsodium(t *testing.T) {
	for i, v := range sodiumtest.Load(t).Secretbox {
		box, nonce, err := SecretboxSealFresh(bytes.NewReader(v.Nonce), v.Plaintext, v.Key)
		require.NoError(t, err, "vector %d", i)
		assert.Equal(t, []byte(v.Nonce), nonce, "vector %d", i)
		assert.Equal(t, []byte(v.Ciphertext), box, "vector %d", i)
	}
}

func TestSecretboxSealFreshOpens(t *testing.T) {
	rnd := bytes.NewReader(bytes.Repeat([]byte{1, 2, 3}, 40))
	albumKey, err := NewKey(rnd)
	require.NoError(t, err)
	fileKey, err := NewKey(rnd)
	require.NoError(t, err)
	assert.NotEqual(t, albumKey, fileKey)
	box, nonce, err := SecretboxSealFresh(rnd, fileKey, albumKey)
	require.NoError(t, err)
	assert.Len(t, box, 48, "Ente's encryptedKey of a file")
	assert.Len(t, nonce, NonceSize)
	got, err := SecretboxOpen(box, nonce, albumKey)
	require.NoError(t, err)
	assert.Equal(t, fileKey, got)
}

func TestSecretboxSealFreshRefuses(t *testing.T) {
	_, _, err := SecretboxSealFresh(bytes.NewReader(make([]byte, 24)), []byte("k"), make([]byte, 16))
	assert.Error(t, err, "a short key")
	_, _, err = SecretboxSealFresh(bytes.NewReader(make([]byte, 10)), []byte("k"), make([]byte, KeySize))
	assert.Error(t, err, "a random source that runs dry")
	_, err = NewKey(bytes.NewReader(make([]byte, 10)))
	assert.Error(t, err)
}
