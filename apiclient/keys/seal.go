package keys

import (
	"fmt"
	"io"
)

// NewKey returns a fresh 32-byte key read from rand (crypto/rand.Reader in
// production): a file key, or an album key.
func NewKey(rand io.Reader) ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := io.ReadFull(rand, k); err != nil {
		return nil, fmt.Errorf("making a key: %w", err)
	}
	return k, nil
}

// SecretboxSealFresh seals plaintext under key with a fresh nonce read from
// rand, as Ente's apps wrap a file key under its album's key, an album key
// under the master key and an album name under its key. It returns the box
// (16 bytes longer than plaintext; 48 bytes for a key) and the nonce, which
// Ente sends as encryptedKey and keyDecryptionNonce (or encryptedName and
// nameDecryptionNonce). A key of the wrong length is an error.
func SecretboxSealFresh(rand io.Reader, plaintext, key []byte) (box, nonce []byte, err error) {
	if len(key) != KeySize {
		return nil, nil, fmt.Errorf("secretbox: key of %d bytes, want %d", len(key), KeySize)
	}
	nonce = make([]byte, NonceSize)
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return nil, nil, fmt.Errorf("secretbox: making a nonce: %w", err)
	}
	return SecretboxSeal(plaintext, nonce, key), nonce, nil
}
