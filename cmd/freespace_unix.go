//go:build unix

package cmd

import "golang.org/x/sys/unix"

// freeSpace is the bytes available to quak on dir's file system, or -1.
func freeSpace(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize) //nolint:unconvert // field types differ between systems
}
