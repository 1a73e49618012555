//go:build !unix

package restore

import "os"

const plainFlags = 0

// noLinkBefore refuses a link or a file that is not plain before it is
// opened, where open cannot refuse to follow one.
func noLinkBefore(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() {
		return &NotPlainError{Path: path, What: kindOf(fi.Mode())}
	}
	return err
}
