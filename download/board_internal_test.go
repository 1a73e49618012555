package download

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A board starts the workers wanted beyond those under way, and counts out
// as many as run beyond a lower number as each comes for its next chunk;
// growing again starts only those missing.
func TestABoardStartsAndStopsWorkers(t *testing.T) {
	b := newBoard(1)
	start, moved := b.want(4)
	assert.Equal(t, 3, start, "one is under way")
	assert.Equal(t, 4, moved)
	assert.True(t, b.stays())

	start, moved = b.want(2)
	assert.Zero(t, start)
	assert.Equal(t, -2, moved)
	assert.False(t, b.stays())
	assert.False(t, b.stays())
	assert.True(t, b.stays(), "two left; the other two stay")
	assert.Equal(t, 2, b.running)

	b.left() // one ended with the chunks
	start, moved = b.want(3)
	assert.Equal(t, 2, start, "one is under way")
	assert.Equal(t, 1, moved)
	start, _ = b.want(3)
	assert.Zero(t, start, "the same number starts none")

	start, moved = b.want(2)
	assert.Zero(t, start, "fewer start none")
	assert.Equal(t, -1, moved)
	start, moved = b.want(3)
	assert.Zero(t, start, "the one to leave has not left: it stays")
	assert.Equal(t, 1, moved)
	assert.True(t, b.stays())
}

// take hands out the chunks in order, none past the last, none once one
// failed.
func TestABoardHandsOutChunksInOrder(t *testing.T) {
	b := newBoard(1)
	for want := 1; want < 3; want++ {
		k, ok := b.take(3)
		assert.Equal(t, want, k)
		assert.True(t, ok)
	}
	_, ok := b.take(3)
	assert.False(t, ok, "past the last")

	b = newBoard(1)
	b.deliver(1, assert.AnError)
	_, ok = b.take(9)
	assert.False(t, ok, "a chunk failed")
}
