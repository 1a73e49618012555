package download

import (
	"context"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A slot's record says which chunk the slot holds and how much of it, and
// counts only while the bytes still have its CRC; clearing the slot for
// the next chunk that takes it clears the record.
func TestARingSlotsRecord(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "r"))
	require.NoError(t, err)
	defer func() { _ = file.Close() }()
	r := &ring{file: file, slots: 3}
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	// Chunk 4 lies in slot 1, after the three slots: its record too.
	_, err = file.WriteAt(data, r.at(4))
	require.NoError(t, err)
	assert.Equal(t, int64(1)*WireChunk, r.at(4))
	assert.Equal(t, int64(r.slots)*WireChunk+slotRecord, r.recordAt(4))
	sum := crc32.Checksum(data[:3000], castagnoli)
	require.NoError(t, r.mark(4, 3000, sum))

	assert.Equal(t, kept{3000, sum}, r.held(4, 5000), "held in part")
	assert.Equal(t, kept{3000, sum}, r.keptFirst(4, 5000), "taken up in part")
	assert.Zero(t, r.held(4, 2999), "more than the chunk has")
	assert.Zero(t, r.held(7, 5000), "another chunk of the same slot")
	assert.Zero(t, r.held(5, 5000), "another slot")

	require.NoError(t, r.mark(4, 5000, crc32.Checksum(data, castagnoli)))
	assert.Equal(t, int64(5000), r.held(4, 5000).n, "held whole")
	assert.Zero(t, r.keptFirst(4, 5000), "held whole: not taken up")
	_, err = file.WriteAt([]byte{data[4000] ^ 1}, r.at(4)+4000)
	require.NoError(t, err)
	assert.Zero(t, r.held(4, 5000), "a byte changed since")

	_, err = file.WriteAt([]byte{data[4000]}, r.at(4)+4000)
	require.NoError(t, err)
	require.NoError(t, r.clear(7)) // chunk 7 takes slot 1 next
	assert.Zero(t, r.held(4, 5000), "cleared for the next chunk")
}

// A chunk's record is forgotten only while it still names that chunk: one
// further on that took the slot since keeps its own.
func TestForgettingAChunkLeavesTheSlotsNextChunk(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "r"))
	require.NoError(t, err)
	defer func() { _ = file.Close() }()
	r := &ring{file: file, slots: 3}
	data := []byte("chunk seven")
	_, err = file.WriteAt(data, r.at(7))
	require.NoError(t, err)
	require.NoError(t, r.mark(7, int64(len(data)), crc32.Checksum(data, castagnoli)))
	require.NoError(t, r.forget(4)) // chunk 4 had slot 1 before chunk 7
	assert.Equal(t, int64(len(data)), r.held(7, int64(len(data))).n, "chunk 7's record stays")
	require.NoError(t, r.forget(7))
	assert.Zero(t, r.held(7, int64(len(data))), "forgotten")
}

// A ring holds as many places as it is sized to: more are freed at once;
// fewer are kept back as the places in use are given, and a growth first
// stops keeping back the ones not yet given.
func TestARingHoldsAsManyPlacesAsSized(t *testing.T) {
	r := &ring{slots: 5}
	r.open()
	free := func() int { return len(r.places) }
	assert.Zero(t, free(), "none until sized")
	r.resize(3)
	assert.Equal(t, 3, free())
	ctx, cancel := context.WithCancel(context.Background())
	for range 3 {
		require.True(t, r.take(ctx))
	}
	cancel()
	assert.False(t, r.take(ctx), "none left: the take ends with its context")

	r.resize(-2)
	for range 3 {
		r.give()
	}
	assert.Equal(t, 1, free(), "two kept back as they were given")
	r.resize(1)
	assert.Equal(t, 2, free())

	require.True(t, r.take(context.Background()))
	r.resize(-1) // the one in use is to be kept back
	r.resize(2)  // no longer; and one more
	assert.Equal(t, 2, free())
	r.give()
	assert.Equal(t, 3, free(), "given back, not kept")
	r.open()
	assert.Zero(t, free(), "opened anew: none")
}
