package download

import (
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
	ring, err := os.Create(filepath.Join(t.TempDir(), "r"))
	require.NoError(t, err)
	defer func() { _ = ring.Close() }()
	const slots = 3
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	buf := make([]byte, 1024)
	// Chunk 4 lies in slot 1, after the three slots: its record too.
	_, err = ring.WriteAt(data, slotAt(4, slots))
	require.NoError(t, err)
	assert.Equal(t, int64(1)*WireChunk, slotAt(4, slots))
	assert.Equal(t, int64(slots)*WireChunk+slotRecord, recordAt(1, slots))
	sum := crc32.Checksum(data[:3000], castagnoli)
	require.NoError(t, markSlot(ring, 4, slots, 3000, sum))

	n, got := held(ring, 4, slots, 5000, buf)
	assert.Equal(t, int64(3000), n, "held in part")
	assert.Equal(t, sum, got)
	n, _ = held(ring, 4, slots, 2999, buf)
	assert.Zero(t, n, "more than the chunk has")
	n, _ = held(ring, 7, slots, 5000, buf)
	assert.Zero(t, n, "another chunk of the same slot")
	n, _ = held(ring, 5, slots, 5000, buf)
	assert.Zero(t, n, "another slot")

	require.NoError(t, markSlot(ring, 4, slots, 5000, crc32.Checksum(data, castagnoli)))
	n, _ = held(ring, 4, slots, 5000, buf)
	assert.Equal(t, int64(5000), n, "held whole")
	_, err = ring.WriteAt([]byte{data[4000] ^ 1}, slotAt(4, slots)+4000)
	require.NoError(t, err)
	n, _ = held(ring, 4, slots, 5000, buf)
	assert.Zero(t, n, "a byte changed since")

	_, err = ring.WriteAt([]byte{data[4000]}, slotAt(4, slots)+4000)
	require.NoError(t, err)
	require.NoError(t, clearSlot(ring, 7, slots)) // chunk 7 takes slot 1 next
	n, _ = held(ring, 4, slots, 5000, buf)
	assert.Zero(t, n, "cleared for the next chunk")
}

// A chunk's record is forgotten only while it still names that chunk: one
// further on that took the slot since keeps its own.
func TestForgettingAChunkLeavesTheSlotsNextChunk(t *testing.T) {
	ring, err := os.Create(filepath.Join(t.TempDir(), "r"))
	require.NoError(t, err)
	defer func() { _ = ring.Close() }()
	const slots = 3
	data := []byte("chunk seven")
	_, err = ring.WriteAt(data, slotAt(7, slots))
	require.NoError(t, err)
	require.NoError(t, markSlot(ring, 7, slots, int64(len(data)), crc32.Checksum(data, castagnoli)))
	buf := make([]byte, 64)
	require.NoError(t, forgetSlot(ring, 4, slots)) // chunk 4 had slot 1 before chunk 7
	n, _ := held(ring, 7, slots, int64(len(data)), buf)
	assert.Equal(t, int64(len(data)), n, "chunk 7's record stays")
	require.NoError(t, forgetSlot(ring, 7, slots))
	n, _ = held(ring, 7, slots, int64(len(data)), buf)
	assert.Zero(t, n, "forgotten")
}
