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
