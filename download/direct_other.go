//go:build !linux

package download

import (
	"errors"
	"os"
	"syscall"
)

var errInvalid = syscall.EINVAL

// openDirect: only Linux has O_DIRECT as quak uses it; elsewhere writes go
// through the page cache.
func openDirect(string) (*os.File, error) { return nil, errors.New("no O_DIRECT here") }
