//go:build unix

package durable

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive lock on the file at path (created 0600), or
// fails with ErrHeld at once when another process holds it. The kernel
// drops the lock when the process dies, so it never goes stale.
func TryLock(path string) (unlock func(), err error) {
	return flock(path, syscall.LOCK_EX|syscall.LOCK_NB, nil)
}

// TryLockAs is TryLock that also writes note into the lock file while it
// holds the lock (who holds it, for ReadNote), and empties it on unlock.
func TryLockAs(path string, note []byte) (unlock func(), err error) {
	return flock(path, syscall.LOCK_EX|syscall.LOCK_NB, note)
}

// Lock takes an exclusive lock on the file at path (created 0600),
// waiting for another process to let it go.
func Lock(path string) (unlock func(), err error) {
	return flock(path, syscall.LOCK_EX, nil)
}

func flock(path string, how int, note []byte) (func(), error) {
	// O_NOFOLLOW: a lock file that is a link is never followed (and made)
	// elsewhere.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, err
	}
	return holding(f, note), nil
}
