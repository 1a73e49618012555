//go:build !unix

package durable

import "os"

// TryLock opens the lock file at path; without flock, overlapping runs are
// kept apart only by the state database's own lock.
func TryLock(path string) (unlock func(), err error) { return open(path) }

// TryLockAs is TryLock that also writes note into the lock file (who
// holds it, for ReadNote), and empties it on unlock.
func TryLockAs(path string, note []byte) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	return holding(f, note), nil
}

// Lock is TryLock where flock does not exist.
func Lock(path string) (unlock func(), err error) { return open(path) }

func open(path string) (func(), error) { return TryLockAs(path, nil) }
