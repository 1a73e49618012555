package keys

import (
	"encoding"
	"hash"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gblake2b "golang.org/x/crypto/blake2b"

	"github.com/quak-photos/quak/download/secretstream/sodiumtest"
)

func xcrypto(tb testing.TB) hash.Hash {
	tb.Helper()
	h, err := gblake2b.New512(nil)
	require.NoError(tb, err)
	return h
}

// writeSplit feeds msg to h in pieces cut at random points, zero-length
// pieces included.
func writeSplit(h hash.Hash, msg []byte, rng *rand.Rand) {
	for len(msg) > 0 {
		n := min(len(msg), rng.Intn(3*BlockSize))
		h.Write(msg[:n])
		msg = msg[n:]
	}
}

// Every length around the block boundaries, and a few large ones, hash as
// golang.org/x/crypto/blake2b hashes them, however the bytes arrive.
func TestHashMatchesXCrypto(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	lengths := []int{1 << 20, 4<<20 + 17, 1<<20 + 129}
	for n := 0; n <= 3*BlockSize+1; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		msg := sodiumtest.Pattern(n, n)
		want := gblake2b.Sum512(msg)
		h := NewHash()
		h.Write(msg)
		require.Equal(t, want[:], h.Sum(nil), "len=%d in one write", n)
		h = NewHash()
		writeSplit(h, msg, rng)
		require.Equal(t, want[:], h.Sum(nil), "len=%d in pieces", n)
		// Sum leaves the state alone: more bytes after it extend the message.
		h.Write([]byte{7})
		again := gblake2b.Sum512(append(msg, 7))
		require.Equal(t, again[:], h.Sum(nil), "len=%d then one more", n)
		h.Reset()
		empty := gblake2b.Sum512(nil)
		require.Equal(t, empty[:], h.Sum(nil), "len=%d reset", n)
	}
	assert.Equal(t, Size, NewHash().Size())
	assert.Equal(t, BlockSize, NewHash().BlockSize())
}

// The counter carries into its high word past 2^64 bytes; a state that
// says so, taken up from x/crypto, hashes as x/crypto goes on to.
func TestTheCounterCarries(t *testing.T) {
	x := xcrypto(t)
	x.Write(make([]byte, 3*BlockSize))
	state, err := x.(encoding.BinaryMarshaler).MarshalBinary()
	require.NoError(t, err)
	// The low counter word sits after the magic and h: set it to 2^64-128.
	lo := len(stateMagic) + 8*8
	for i := 0; i < 8; i++ {
		state[lo+i] = 0xff
	}
	state[lo+7] = 0x80
	require.NoError(t, x.(encoding.BinaryUnmarshaler).UnmarshalBinary(state))
	ours := NewHash()
	require.NoError(t, ours.(encoding.BinaryUnmarshaler).UnmarshalBinary(state))
	more := make([]byte, 5*BlockSize+3)
	x.Write(more)
	ours.Write(more)
	assert.Equal(t, x.Sum(nil), ours.Sum(nil))
}

// A download cut part-way keeps its hash state between attempts; that
// state is x/crypto's format, so either implementation takes up the other's.
func TestHashStateIsXCryptosFormat(t *testing.T) {
	msg := sodiumtest.Pattern(3*BlockSize+50, 3)
	want := gblake2b.Sum512(msg)
	for _, cut := range []int{0, 1, BlockSize - 1, BlockSize, BlockSize + 1, 2 * BlockSize, 3*BlockSize + 49} {
		ours, x := NewHash(), xcrypto(t)
		ours.Write(msg[:cut])
		x.Write(msg[:cut])
		a, err := ours.(encoding.BinaryMarshaler).MarshalBinary()
		require.NoError(t, err)
		b, err := x.(encoding.BinaryMarshaler).MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, a, "cut=%d", cut)

		fromX := NewHash()
		require.NoError(t, fromX.(encoding.BinaryUnmarshaler).UnmarshalBinary(b), "cut=%d", cut)
		fromX.Write(msg[cut:])
		assert.Equal(t, want[:], fromX.Sum(nil), "cut=%d", cut)

		toX := xcrypto(t)
		require.NoError(t, toX.(encoding.BinaryUnmarshaler).UnmarshalBinary(a), "cut=%d", cut)
		toX.Write(msg[cut:])
		assert.Equal(t, want[:], toX.Sum(nil), "cut=%d", cut)
	}
}

// A damaged state is refused, and the hash it was offered to still works.
func TestADamagedHashStateIsRefused(t *testing.T) {
	h := NewHash()
	h.Write([]byte("abc"))
	good, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	require.NoError(t, err)
	damage := map[string]func([]byte) []byte{
		"short":           func(b []byte) []byte { return b[:len(b)-1] },
		"long":            func(b []byte) []byte { return append(b, 0) },
		"magic":           func(b []byte) []byte { b[0] = 'x'; return b },
		"another size":    func(b []byte) []byte { b[len(stateMagic)+8*8+2*8] = 32; return b },
		"offset past end": func(b []byte) []byte { b[len(b)-1] = BlockSize + 1; return b },
	}
	for name, f := range damage {
		fresh := NewHash()
		err := fresh.(encoding.BinaryUnmarshaler).UnmarshalBinary(f(append([]byte{}, good...)))
		require.ErrorIs(t, err, errHashState, name)
		fresh.Write([]byte("abc"))
		assert.Equal(t, h.Sum(nil), fresh.Sum(nil), name)
	}
	// A full pending block is a state Write leaves, and taken.
	full := NewHash()
	full.Write(make([]byte, BlockSize))
	state, err := full.(encoding.BinaryMarshaler).MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, byte(BlockSize), state[len(state)-1])
	back := NewHash()
	require.NoError(t, back.(encoding.BinaryUnmarshaler).UnmarshalBinary(state))
	assert.Equal(t, full.Sum(nil), back.Sum(nil))
}

func TestAKeyedHashResetsToItsKeyAndIsNotMarshalled(t *testing.T) {
	key := sodiumtest.Pattern(32, 1)
	d := newDigest(32, key, nil, nil)
	_, _ = d.Write([]byte("some bytes"))
	d.Reset()
	_, _ = d.Write([]byte("msg"))
	want, _ := gblake2b.New(32, key)
	want.Write([]byte("msg"))
	assert.Equal(t, want.Sum(nil), d.Sum(nil))
	_, err := d.MarshalBinary()
	assert.Error(t, err)
	plain, _ := NewHash().(encoding.BinaryMarshaler).MarshalBinary()
	assert.ErrorIs(t, d.UnmarshalBinary(plain), errHashState)
}

func FuzzHash(f *testing.F) {
	f.Add([]byte("abc"), uint16(1), uint16(2))
	f.Add(make([]byte, 3*BlockSize), uint16(BlockSize), uint16(BlockSize))
	f.Fuzz(func(t *testing.T, msg []byte, a, b uint16) {
		want := gblake2b.Sum512(msg)
		h := NewHash()
		i := min(int(a), len(msg))
		j := min(i+int(b), len(msg))
		h.Write(msg[:i])
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		require.NoError(t, err)
		h = NewHash()
		require.NoError(t, h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state))
		h.Write(msg[i:j])
		h.Write(msg[j:])
		require.Equal(t, want[:], h.Sum(nil))
	})
}

// BenchmarkHash compares quak's BLAKE2b-512 with golang.org/x/crypto's
// on one 4 MiB chunk, the size a download hashes at a time.
func BenchmarkHash(b *testing.B) {
	buf := sodiumtest.Pattern(4<<20, 1)
	for _, c := range []struct {
		name string
		new  func() hash.Hash
	}{{"quak", NewHash}, {"x-crypto", func() hash.Hash { return xcrypto(b) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			h := c.new()
			for i := 0; i < b.N; i++ {
				h.Reset()
				h.Write(buf)
				h.Sum(nil)
			}
		})
	}
}
