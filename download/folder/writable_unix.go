//go:build unix

package folder

import (
	"os"

	"golang.org/x/sys/unix"
)

// Writable reports whether quak can write its own area in DIR: DIR/.quak
// when it exists, else DIR itself. A read-only mount (a snapshot, a
// restic or borg mount) or a folder of another user's answers false.
// Nothing is made to find out.
func (f *Folder) Writable() bool {
	p := f.path()
	if _, err := os.Lstat(p); err != nil {
		p = f.Dir
	}
	return unix.Access(p, unix.W_OK) == nil
}
