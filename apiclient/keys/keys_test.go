package keys

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
	"github.com/quak-photos/quak/errs"
)

func TestKDFVectors(t *testing.T) {
	vectors := sodiumtest.Load(t).KDF
	require.NotEmpty(t, vectors)
	for _, v := range vectors {
		t.Run(fmt.Sprintf("%s/%d/%d", v.Context, v.SubkeyID, v.SubkeyLen), func(t *testing.T) {
			got, err := DeriveSubkey(v.MasterKey, v.SubkeyID, v.Context, v.SubkeyLen)
			require.NoError(t, err)
			assert.Equal(t, []byte(v.Subkey), got)
			if v.Context == "loginctx" && v.SubkeyID == 1 && v.SubkeyLen == 32 {
				lk, err := LoginKey(v.MasterKey)
				require.NoError(t, err)
				assert.Equal(t, []byte(v.Subkey[:16]), lk)
			}
		})
	}
}

// The KDF takes libsodium's ranges: a 32-byte key, a context of at most 8
// bytes and 16 to 64 bytes out; anything else is refused, not cut short.
func TestDeriveSubkeyTakesLibsodiumsRanges(t *testing.T) {
	key := sodiumtest.Pattern(KeySize, 1)
	for _, size := range []int{16, 64} {
		sub, err := DeriveSubkey(key, 1, "12345678", size)
		require.NoError(t, err, "size %d", size)
		assert.Len(t, sub, size)
	}
	for _, c := range []struct {
		key  []byte
		ctx  string
		size int
	}{{key, "12345678", 15}, {key, "12345678", 65}, {key, "123456789", 32}, {key[:KeySize-1], "ctx", 32}} {
		_, err := DeriveSubkey(c.key, 1, c.ctx, c.size)
		assert.ErrorIs(t, err, ErrBadParams, "key %d bytes, context %q, size %d", len(c.key), c.ctx, c.size)
	}
}

func TestArgon2idVectors(t *testing.T) {
	for _, v := range sodiumtest.Load(t).Argon2id {
		t.Run(fmt.Sprintf("ops=%d,mem=%d", v.OpsLimit, v.MemLimit), func(t *testing.T) {
			got, err := DeriveKEK(v.Password, v.Salt, v.OpsLimit, v.MemLimit)
			require.NoError(t, err)
			assert.Equal(t, []byte(v.Key), got)
		})
	}
}

func TestArgon2idRejectsHostileParams(t *testing.T) {
	salt := make([]byte, SaltSize)
	for _, tc := range []struct {
		ops uint32
		mem uint64
	}{{0, 1 << 20}, {2, 1 << 40}, {1 << 20, 1 << 20}, {2, 1024}} {
		_, err := DeriveKEK([]byte("pw"), salt, tc.ops, tc.mem)
		assert.ErrorIs(t, err, ErrBadParams, "ops=%d mem=%d", tc.ops, tc.mem)
	}
	_, err := DeriveKEK([]byte("pw"), salt[:8], 2, 1<<20)
	assert.ErrorIs(t, err, ErrBadParams)
}

func TestSecretboxVectors(t *testing.T) {
	for i, v := range sodiumtest.Load(t).Secretbox {
		got, err := SecretboxOpen(v.Ciphertext, v.Nonce, v.Key)
		require.NoError(t, err, "vector %d", i)
		assert.Equal(t, []byte(v.Plaintext), append([]byte{}, got...), "vector %d", i)
		assert.Equal(t, []byte(v.Ciphertext), SecretboxSeal(v.Plaintext, v.Nonce, v.Key), "vector %d", i)
		bad := bytes.Clone(v.Ciphertext)
		bad[0] ^= 1
		_, err = SecretboxOpen(bad, v.Nonce, v.Key)
		assert.ErrorIs(t, err, errs.ErrCorrupted)
	}
}

func TestSealedBoxVectors(t *testing.T) {
	for i, v := range sodiumtest.Load(t).Sealedbox {
		got, err := SealedBoxOpen(v.Ciphertext, v.PublicKey, v.SecretKey)
		require.NoError(t, err, "vector %d", i)
		assert.Equal(t, []byte(v.Plaintext), append([]byte{}, got...), "vector %d", i)
		bad := bytes.Clone(v.Ciphertext)
		bad[len(bad)-1] ^= 1
		_, err = SealedBoxOpen(bad, v.PublicKey, v.SecretKey)
		assert.ErrorIs(t, err, errs.ErrCorrupted)
		// Our sealing opens with the same key pair.
		ct, err := SealedBoxSeal(v.Plaintext, v.PublicKey, rand.Reader)
		require.NoError(t, err)
		again, err := SealedBoxOpen(ct, v.PublicKey, v.SecretKey)
		require.NoError(t, err)
		assert.Equal(t, []byte(v.Plaintext), append([]byte{}, again...))
	}
}

// Ente's content hash, and the KDF's BLAKE2b at every output size, agree
// with libsodium's crypto_generichash.
func TestGenericHashVectors(t *testing.T) {
	vectors := sodiumtest.Load(t).GenericHash
	require.NotEmpty(t, vectors)
	for _, v := range vectors {
		in := sodiumtest.Pattern(v.InputLen, v.InputSeed)
		if v.OutputLen == 64 {
			h := NewHash()
			// Write in uneven pieces: the hash streams.
			for p := in; len(p) > 0; {
				n := min(len(p), 1000+len(p)%7)
				h.Write(p[:n])
				p = p[n:]
			}
			assert.Equal(t, []byte(v.Hash), h.Sum(nil), "len=%d", v.InputLen)
		}
		assert.Equal(t, []byte(v.Hash), blake2bSaltPersonal(v.OutputLen, nil, in, nil, nil), "len=%d,out=%d", v.InputLen, v.OutputLen)
	}
}

func TestBase64(t *testing.T) {
	raw := []byte{0xfb, 0xff, 0x01, 0x02}
	for _, s := range []string{"+/8BAg==", "+/8BAg", "-_8BAg==", "-_8BAg"} {
		got, err := DecodeB64(s)
		require.NoError(t, err, s)
		assert.Equal(t, raw, got, s)
	}
	_, err := DecodeB64("not base64!")
	assert.Error(t, err)
	assert.Equal(t, "+/8BAg==", EncodeB64(raw))
	assert.Equal(t, "-_8BAg==", EncodeToken(raw))
}
