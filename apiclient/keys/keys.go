// Package keys implements Ente's key hierarchy: the Argon2id key-encryption
// key, libsodium's KDF for the SRP login key, secretbox and sealed boxes for
// keys and names, the BLAKE2b-512 content hash, and Ente's base64 rules.
package keys

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/quak-photos/quak/errs"
)

// Sizes of Ente's keys and nonces.
const (
	KeySize   = 32
	NonceSize = 24
	SaltSize  = 16
)

// Limits on the Argon2id parameters quak accepts from a server, so that a
// hostile or broken server cannot make it allocate without bound. Real
// accounts use at most 1 GiB.
const (
	MaxMemLimit = 2 << 30
	MaxOpsLimit = 1024
)

// ErrBadParams reports key-derivation parameters outside what quak accepts.
var ErrBadParams = errors.New("unusable key derivation parameters")

// DeriveKEK derives the key-encryption key from the password as libsodium's
// crypto_pwhash (Argon2id v1.3) with opsLimit passes and memLimit bytes of
// memory, one thread, 32 bytes of output.
func DeriveKEK(password, salt []byte, opsLimit uint32, memLimit uint64) ([]byte, error) {
	if len(salt) != SaltSize || opsLimit < 1 || opsLimit > MaxOpsLimit || memLimit < 8<<10 || memLimit > MaxMemLimit {
		return nil, fmt.Errorf("%w: salt %d bytes, ops %d, mem %d", ErrBadParams, len(salt), opsLimit, memLimit)
	}
	return argon2.IDKey(password, salt, opsLimit, uint32(memLimit/1024), 1, KeySize), nil
}

// DeriveSubkey is libsodium's crypto_kdf_derive_from_key: BLAKE2b keyed with
// key, salted with the little-endian id and personalized with ctx (at most 8
// bytes), giving size bytes (16..64).
func DeriveSubkey(key []byte, id uint64, ctx string, size int) ([]byte, error) {
	if len(key) != KeySize || len(ctx) > 8 || size < 16 || size > 64 {
		return nil, fmt.Errorf("%w: kdf key %d bytes, context %q, size %d", ErrBadParams, len(key), ctx, size)
	}
	var salt [16]byte
	binary.LittleEndian.PutUint64(salt[:], id)
	return blake2bSaltPersonal(size, key, nil, salt[:], []byte(ctx)), nil
}

// LoginKey is the SRP password: the first 16 bytes of subkey 1 of the KEK in
// context "loginctx".
func LoginKey(kek []byte) ([]byte, error) {
	sub, err := DeriveSubkey(kek, 1, "loginctx", 32)
	if err != nil {
		return nil, err
	}
	return sub[:16], nil
}

// SecretboxOpen opens libsodium's crypto_secretbox_easy (MAC ‖ ciphertext).
// A wrong key or damaged box gives an error wrapping errs.ErrCorrupted.
func SecretboxOpen(ciphertext, nonce, key []byte) ([]byte, error) {
	if len(nonce) != NonceSize || len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: nonce %d bytes, key %d bytes: %w", len(nonce), len(key), errs.ErrCorrupted)
	}
	out, ok := secretbox.Open(nil, ciphertext, (*[24]byte)(nonce), (*[32]byte)(key))
	if !ok {
		return nil, fmt.Errorf("secretbox: %w", errs.ErrCorrupted)
	}
	return out, nil
}

// SecretboxSeal is libsodium's crypto_secretbox_easy.
func SecretboxSeal(plaintext, nonce, key []byte) []byte {
	return secretbox.Seal(nil, plaintext, (*[24]byte)(nonce), (*[32]byte)(key))
}

// SealedBoxOpen opens libsodium's crypto_box_seal for the key pair.
func SealedBoxOpen(ciphertext, publicKey, secretKey []byte) ([]byte, error) {
	if len(publicKey) != KeySize || len(secretKey) != KeySize {
		return nil, fmt.Errorf("sealed box: key pair of %d and %d bytes: %w", len(publicKey), len(secretKey), errs.ErrCorrupted)
	}
	out, ok := box.OpenAnonymous(nil, ciphertext, (*[32]byte)(publicKey), (*[32]byte)(secretKey))
	if !ok {
		return nil, fmt.Errorf("sealed box: %w", errs.ErrCorrupted)
	}
	return out, nil
}

// SealedBoxSeal is libsodium's crypto_box_seal to publicKey.
func SealedBoxSeal(plaintext, publicKey []byte, rand io.Reader) ([]byte, error) {
	return box.SealAnonymous(nil, plaintext, (*[32]byte)(publicKey), rand)
}

// NewKeyPair makes an X25519 key pair as crypto_box_keypair does.
func NewKeyPair(rand io.Reader) (publicKey, secretKey []byte, err error) {
	pub, sec, err := box.GenerateKey(rand)
	if err != nil {
		return nil, nil, err
	}
	return pub[:], sec[:], nil
}

// NewHash returns Ente's content hash: unkeyed BLAKE2b-512, libsodium's
// crypto_generichash with a 64-byte output, as golang.org/x/crypto/blake2b
// computes it. Its state marshals (encoding.BinaryMarshaler), so a cut
// download can keep it.
func NewHash() hash.Hash {
	h, err := blake2b.New512(nil)
	if err != nil {
		panic("keys: internal error: " + err.Error()) // only a key over 64 bytes fails
	}
	return h
}

// DecodeB64 decodes a binary field. Ente writes standard base64 with padding;
// quak also accepts it unpadded and in the URL-safe alphabet.
func DecodeB64(s string) ([]byte, error) {
	t := strings.TrimRight(s, "=")
	if b, err := base64.RawStdEncoding.DecodeString(t); err == nil {
		return b, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil {
		return nil, fmt.Errorf("invalid base64 (%d characters)", len(s))
	}
	return b, nil
}

// EncodeB64 encodes a binary field as Ente expects: standard, padded.
func EncodeB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// EncodeToken encodes the raw auth token as the X-Auth-Token header wants it:
// URL-safe base64 with padding.
func EncodeToken(raw []byte) string { return base64.URLEncoding.EncodeToString(raw) }
