package download

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/secretstream"
)

func TestADownloadWeighsItsChunkBufferUpToItsShare(t *testing.T) {
	whole := int64(secretstream.ChunkSize + secretstream.Overhead)
	m := newMemory(8 * whole) // a share of two whole chunks: only the buffer counts
	for _, c := range []struct{ size, weight int64 }{
		{-1, whole}, // not known: a whole chunk
		{0, 0},
		{1000, 1000},
		{whole - 1, whole - 1},
		{whole, whole},
		{whole + 1, whole}, // a large file reads one chunk at a time
		{40 * whole, whole},
	} {
		give, err := m.take(context.Background(), c.size)
		require.NoError(t, err)
		left := 8*whole - c.weight
		require.True(t, m.sem.TryAcquire(left), "size %d weighs at most %d", c.size, c.weight)
		assert.False(t, m.sem.TryAcquire(1), "size %d weighs at least %d", c.size, c.weight)
		m.sem.Release(left)
		give()
		require.True(t, m.sem.TryAcquire(8*whole), "size %d: all given back", c.size)
		m.sem.Release(8 * whole)
	}
}
