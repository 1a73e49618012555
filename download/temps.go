package download

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/download/durable"
)

// InTempDir reports whether path names a file directly in the temp folder
// dir, by a name quak gives temp files.
func InTempDir(dir, path string) bool {
	return filepath.Dir(path) == filepath.Clean(dir) && strings.HasPrefix(filepath.Base(path), durable.TempPrefix)
}

// openTempFile opens a kept temp file for writing: a regular file of one
// name only (never another name of a file quak does not own), never
// through a symlink.
func openTempFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || !oneName(fi) {
		return nil, fmt.Errorf("%s is not a regular file of its own", filepath.Base(path))
	}
	f, err := os.OpenFile(path, os.O_RDWR|noFollow, 0) // no window to swap in a symlink
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || !oneName(fi) {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	return f, nil
}

// RemoveLeftovers empties the temp folder dir of what interrupted runs
// left, but the paths in keep (downloads a later run takes up), and
// returns how many entries it removed. It looks nowhere else: outside
// dir, a name is never a reason to delete a file; a dir that is a symbolic
// link is refused, not followed.
func RemoveLeftovers(dir string, keep map[string]bool) (int, error) {
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return 0, fmt.Errorf("temp area %s is not a folder (a symbolic link?): not swept", dir)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if keep[p] {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
