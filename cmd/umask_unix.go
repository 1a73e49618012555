//go:build unix

package cmd

import (
	"os"
	"syscall"
)

// umask reads the process umask (setting it back at once), so saved photos
// get the permissions any other program's files would.
func umask() os.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return os.FileMode(m)
}
