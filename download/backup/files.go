package backup

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/secretstream"
)

// hardLink is os.Link; tests replace it to model file systems that cannot
// link.
var hardLink = os.Link

// linkOrCopy makes dst the same file as src: a hard link, or a copy where
// the file system cannot link (copied says which). It goes through a temp
// name in tmpDir, so dst is never half-written and a stale dst is replaced.
func linkOrCopy(tmpDir, src, dst string) (copied bool, err error) {
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(tmpDir, durable.TempPrefix+"link-*")
	if err != nil {
		return false, err
	}
	name := tmp.Name()
	_ = tmp.Close()
	_ = os.Remove(name)
	if err := hardLink(src, name); err != nil {
		if err := copyFile(src, name); err != nil {
			_ = os.Remove(name)
			return false, fmt.Errorf("copying %s: %w", filepath.Base(src), err)
		}
		copied = true
	}
	if err := os.Rename(name, dst); err != nil {
		_ = os.Remove(name)
		return false, err
	}
	return copied, durable.SyncDir(dir)
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	if err = out.Sync(); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// plainSize estimates plaintext bytes from a ciphertext size.
func plainSize(ct int64) int64 {
	if ct <= 0 {
		return 0
	}
	chunks := (ct + secretstream.ChunkSize + secretstream.Overhead - 1) / (secretstream.ChunkSize + secretstream.Overhead)
	return ct - chunks*secretstream.Overhead
}
