//go:build linux

package download

import (
	"os"
	"syscall"
)

var errInvalid = syscall.EINVAL

func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT|noFollow, 0)
}
