//go:build unix

// Package foldertest makes folders for the tests of quak's packages.
package foldertest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadOnly makes dir refuse every write for the rest of the test, as a
// read-only mount does: for an ordinary user, by taking the write bits
// off everything in it; for root, who writes whatever the mode, by
// mounting dir read-only over itself. The test is skipped where neither
// refuses a write (root without the right to mount).
func ReadOnly(tb testing.TB, dir string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		chmodTree(tb, dir, 0o222, false)
		tb.Cleanup(func() { chmodTree(tb, dir, 0o200, true) })
	} else if err := mountReadOnly(dir); err != nil {
		tb.Skipf("root cannot mount %s read-only here: %v", dir, err)
	} else {
		tb.Cleanup(func() {
			if err := unix.Unmount(dir, 0); err != nil {
				tb.Errorf("unmounting %s: %v", dir, err)
			}
		})
	}
	probe := filepath.Join(dir, ".probe")
	if err := os.WriteFile(probe, nil, 0o600); err == nil {
		_ = os.Remove(probe)
		tb.Fatalf("%s still takes writes", dir)
	}
}

func mountReadOnly(dir string) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return errors.Join(err, unix.Unmount(dir, 0))
	}
	return nil
}

// chmodTree takes bits off (or puts them back on) every file and folder
// under dir.
func chmodTree(tb testing.TB, dir string, bits fs.FileMode, on bool) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m := fi.Mode().Perm() &^ bits
		if on {
			m = fi.Mode().Perm() | bits
		}
		return os.Chmod(p, m)
	})
	if err != nil {
		tb.Errorf("chmod under %s: %v", dir, err)
	}
}
