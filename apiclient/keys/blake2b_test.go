package keys

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/blake2b"

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
)

// xcryptoSum is golang.org/x/crypto's keyed BLAKE2b of msg, the reference
// for the lengths libsodium's vectors do not cover.
func xcryptoSum(tb testing.TB, size int, key, msg []byte) []byte {
	tb.Helper()
	h, err := blake2b.New(size, key)
	require.NoError(tb, err)
	h.Write(msg)
	return h.Sum(nil)
}

// Without salt and personalization, the KDF's BLAKE2b is plain BLAKE2b:
// it agrees with x/crypto around every block edge, keyed or not, at the
// shortest and longest key and digest.
func TestBlake2bSaltPersonalMatchesXCrypto(t *testing.T) {
	for _, keyLen := range []int{0, 1, 32, 64} {
		key := sodiumtest.Pattern(keyLen, 1)
		for _, size := range []int{1, 16, 32, 64} {
			for _, n := range []int{0, 1, 127, 128, 129, 255, 256, 257, 1000} {
				msg := sodiumtest.Pattern(n, 2)
				require.Equal(t, xcryptoSum(t, size, key, msg), blake2bSaltPersonal(size, key, msg, nil, nil),
					"key=%d,size=%d,len=%d", keyLen, size, n)
			}
		}
	}
}

func FuzzBlake2bSaltPersonal(f *testing.F) {
	f.Add([]byte("abc"), []byte{}, uint8(64))
	f.Add(make([]byte, 2*blake2bBlockSize), make([]byte, 32), uint8(32))
	f.Fuzz(func(t *testing.T, msg, key []byte, size uint8) {
		key = key[:min(len(key), 64)]
		n := int(size%64) + 1
		require.Equal(t, xcryptoSum(t, n, key, msg), blake2bSaltPersonal(n, key, msg, nil, nil))
	})
}

// BenchmarkContentHash is Ente's content hash (NewHash, x/crypto's
// BLAKE2b-512) of one 4 MiB chunk, the size a download hashes at a time.
func BenchmarkContentHash(b *testing.B) {
	buf := sodiumtest.Pattern(4<<20, 1)
	h := NewHash()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		h.Reset()
		h.Write(buf)
		h.Sum(nil)
	}
}
