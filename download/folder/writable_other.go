//go:build !unix

package folder

import "os"

// Writable reports whether quak can write its own area in DIR: here,
// whether a file can be made in it (and is removed again).
func (f *Folder) Writable() bool {
	dir := f.path()
	if _, err := os.Lstat(dir); err != nil {
		dir = f.Dir
	}
	t, err := os.CreateTemp(dir, ".quak-probe-*")
	if err != nil {
		return false
	}
	_ = t.Close()
	_ = os.Remove(t.Name())
	return true
}
