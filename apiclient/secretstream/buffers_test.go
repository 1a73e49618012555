package secretstream

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/errs"
)

// reused reports whether a buffer given back comes out again for size n.
// The pool may drop what it is given (always a quarter of it under -race),
// so it is tried a few times.
func reused(n int) bool {
	for range 20 {
		b := takeBuf(n)
		giveBuf(b)
		c := takeBuf(n)
		if unsafe.SliceData(b) == unsafe.SliceData(c) {
			return true
		}
	}
	return false
}

func TestBuffersAreKeptBySize(t *testing.T) {
	for _, n := range []int{64, 4096, 4097, 1 << 16, 1<<16 + 1, 1 << 18, 1<<18 + 1, 1<<20 + 81, 2200000, 4 << 20, fullBuf} {
		b := takeBuf(n)
		assert.Len(t, b, n)
		assert.True(t, reused(n), "a buffer of %d bytes is not kept", n)
	}
	assert.Equal(t, fullBuf, cap(takeBuf(fullBuf)), "a whole chunk's buffer is not rounded up")
	assert.Equal(t, 4096, cap(takeBuf(100)))
	assert.Equal(t, 1<<16, cap(takeBuf(1<<15+1)))
	assert.Equal(t, 2<<16, cap(takeBuf(1<<16+1)))
	assert.Equal(t, 3<<16, cap(takeBuf(1<<17+1)))
	assert.Equal(t, 5<<16, cap(takeBuf(1<<18+1)))
	assert.Equal(t, 17<<16, cap(takeBuf(1<<20+81)), "a 1 MiB stream takes 1.06 MiB")
	assert.Equal(t, 34<<16, cap(takeBuf(2200000)), "a 2.1 MiB stream takes 2.13 MiB")
	assert.Equal(t, 4<<20, cap(takeBuf(4<<20)))
	// Between 4 MiB and a whole chunk (never asked for by Ente's streams),
	// and beyond, buffers are made to measure and not kept.
	assert.Equal(t, 4<<20+1, cap(takeBuf(4<<20+1)))
	assert.False(t, reused(4<<20+1))
	assert.False(t, reused(fullBuf+1))
}

// Every size gets a buffer of its own class: large enough, at most twice
// its size up to 64 KiB and less than 64 KiB over it above, and never one
// of another class.
func TestEverySizeHasItsClass(t *testing.T) {
	seen := map[int]int{} // class index → its size
	for n := 1; n <= maxClass; n += 997 {
		i, size, ok := classOf(n)
		require.True(t, ok, "n=%d", n)
		require.GreaterOrEqual(t, size, n)
		if n > step {
			require.Less(t, size-n, step, "n=%d", n)
		} else {
			require.True(t, size == 1<<minShift || size < 2*n, "n=%d size=%d", n, size)
		}
		if s, ok := seen[i]; ok {
			require.Equal(t, s, size, "class %d holds two sizes", i)
		}
		seen[i] = size
	}
	assert.Len(t, seen, nClasses)
}

func TestAReleasedReaderReadsNothing(t *testing.T) {
	v, _ := multi(t)
	r, err := newReader(v.Key, v.Header, bytes.NewReader(v.Ciphertext), int64(len(v.Ciphertext)), v.ChunkSize)
	require.NoError(t, err)
	buf := make([]byte, 10)
	_, err = r.Read(buf)
	require.NoError(t, err)
	r.Release()
	r.Release()
	n, err := r.Read(buf)
	assert.Zero(t, n)
	assert.ErrorIs(t, err, errReleased)
	_, err = r.WriteTo(io.Discard)
	assert.ErrorIs(t, err, errReleased)
}

// A buffer handed from a complete stream to a cut one keeps none of the
// first stream's bytes in what the second gives out.
func TestAReusedBufferGivesOutOnlyItsOwnStream(t *testing.T) {
	key := bytes.Repeat([]byte{5}, KeySize)
	header := bytes.Repeat([]byte{6}, HeaderSize)
	first := bytes.Repeat([]byte{0xAA}, 3000)
	ct1, err := encrypt(key, header, first, ChunkSize)
	require.NoError(t, err)
	second := bytes.Repeat([]byte{0x55}, 2000)
	ct2, err := encrypt(key, header, second, ChunkSize)
	require.NoError(t, err)

	for range 20 {
		r, err := NewReader(key, header, bytes.NewReader(ct1), int64(len(ct1)))
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, first, got)
		r.Release()

		// The second stream, cut before its end, in the same size class.
		r, err = NewReader(key, header, bytes.NewReader(ct2[:len(ct2)-5]), int64(len(ct2)))
		require.NoError(t, err)
		got, err = io.ReadAll(r)
		var te *errs.TruncatedStreamError
		require.True(t, errors.As(err, &te), "got %v", err)
		assert.Empty(t, got)
		r.Release()

		r, err = NewReader(key, header, bytes.NewReader(ct2), int64(len(ct2)))
		require.NoError(t, err)
		got, err = io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, second, got)
		r.Release()
	}
}

func TestReleaseGivesTheBufferBack(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	header := bytes.Repeat([]byte{8}, HeaderSize)
	// A photo shorter than a chunk, and a stream of whole chunks.
	for _, size := range []int{5000, ChunkSize + 100} {
		ct, err := encrypt(key, header, make([]byte, size), ChunkSize)
		require.NoError(t, err)
		back := false
		for range 20 {
			r, err := NewReader(key, header, bytes.NewReader(ct), int64(len(ct)))
			require.NoError(t, err)
			_, err = io.Copy(io.Discard, r)
			require.NoError(t, err)
			held, n := unsafe.SliceData(r.buf), len(r.buf)
			r.Release()
			if back = unsafe.SliceData(takeBuf(n)) == held; back {
				break
			}
		}
		assert.True(t, back, "a released Reader's buffer (stream of %d bytes) never came back", size)
	}
}

func TestOpenBlobGivesItsBufferBack(t *testing.T) {
	v, _ := multi(t)
	start := Outstanding()
	_, err := OpenBlob(v.Key, v.Header, v.Ciphertext)
	require.Error(t, err) // a stream of several chunks is no blob
	key := bytes.Repeat([]byte{9}, KeySize)
	header := bytes.Repeat([]byte{1}, HeaderSize)
	ct, err := encrypt(key, header, []byte("metadata"), 8)
	require.NoError(t, err)
	got, err := OpenBlob(key, header, ct)
	require.NoError(t, err)
	assert.Equal(t, "metadata", string(got))
	assert.Equal(t, start, Outstanding())
}

// A whole chunk's plaintext starts on a 4096-byte boundary in its buffer,
// so that it can be written around the page cache from where it is.
func TestAWholeChunksPlaintextIsAligned(t *testing.T) {
	for range 3 {
		b := takeBuf(fullBuf)
		require.Len(t, b, fullBuf)
		require.Zero(t, uintptr(unsafe.Pointer(&b[64]))%plainAlign)
		giveBuf(b)
	}
}
