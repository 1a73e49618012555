//go:build unix

package verify

import (
	"os"
	"syscall"
)

// fileKey identifies an inode, so hard-linked copies are read once.
type fileKey struct{ dev, ino uint64 }

func keyOf(fi os.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{dev: uint64(st.Dev), ino: st.Ino}, true //nolint:unconvert // Dev's type differs between systems
}
