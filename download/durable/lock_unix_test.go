//go:build unix

package durable

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTryLockRefusesWhileHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := TryLock(path)
	require.NoError(t, err)
	_, err = TryLock(path)
	assert.ErrorIs(t, err, ErrHeld)
	unlock()
	again, err := TryLock(path)
	require.NoError(t, err, "free once let go")
	again()
}

// Lock waits for the holder: it returns only once the holder let go.
func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := TryLock(path)
	require.NoError(t, err)
	got := make(chan func(), 1)
	go func() {
		u, err := Lock(path)
		if err != nil {
			got <- nil
			return
		}
		got <- u
	}()
	unlock() // whenever the waiter gets there, it finds the lock free only now
	u := <-got
	require.NotNil(t, u)
	_, err = TryLock(path)
	assert.ErrorIs(t, err, ErrHeld, "the waiter holds it now")
	u()
}

func TestLockOfAnUnwritablePathFails(t *testing.T) {
	_, err := TryLock(filepath.Join(t.TempDir(), "missing", "lock"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrHeld)
	_, err = Lock(filepath.Join(t.TempDir(), "missing", "lock"))
	require.Error(t, err)
}

// The holder's note is in the lock file while the lock is held, a longer
// note than before leaves nothing of the older one, and letting go
// empties it; ReadNote reads at most 4 KiB.
func TestTryLockAsWritesItsNoteWhileHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := TryLockAs(path, []byte("a much longer note than the next"))
	require.NoError(t, err)
	got, err := ReadNote(path)
	require.NoError(t, err)
	assert.Equal(t, "a much longer note than the next", string(got))
	unlock()
	got, err = ReadNote(path)
	require.NoError(t, err)
	assert.Empty(t, got)

	unlock, err = TryLockAs(path, []byte("short"))
	require.NoError(t, err)
	_, err = TryLockAs(path, []byte("other"))
	assert.ErrorIs(t, err, ErrHeld)
	got, err = ReadNote(path)
	require.NoError(t, err)
	assert.Equal(t, "short", string(got), "a refused run writes nothing")
	unlock()

	unlock, err = TryLock(path)
	require.NoError(t, err)
	got, _ = ReadNote(path)
	assert.Empty(t, got, "no note: nothing written")
	unlock()

	big := make([]byte, maxNote+10)
	for i := range big {
		big[i] = 'x'
	}
	unlock, err = TryLockAs(path, big)
	require.NoError(t, err)
	got, err = ReadNote(path)
	require.NoError(t, err)
	assert.Len(t, got, maxNote)
	unlock()
	_, err = ReadNote(filepath.Join(t.TempDir(), "none"))
	assert.Error(t, err)
}
