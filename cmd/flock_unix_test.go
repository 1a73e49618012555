//go:build unix

package cmd

import (
	"os"
	"syscall"
)

// tryFlock takes and lets go an exclusive lock on f, or says why not.
func tryFlock(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
