//go:build unix

package download

import (
	"os"
	"syscall"
)

// noFollow makes an open fail on a symlink.
const noFollow = syscall.O_NOFOLLOW

// oneName reports whether fi's file has no other name (hard link) than the
// one it was found by: only such a file in the temp folder is quak's to
// write.
func oneName(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink == 1
}
