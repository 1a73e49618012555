// Package livephoto unpacks Ente's live photos (a zip of an image and a
// video) safely: entries come from other people in shared albums, so names
// with paths, links, extra entries and sizes beyond the declared ones are
// refused, and each part is checked against its own hash.
package livephoto

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
)

// MaxPart bounds a declared part size (Ente's files are at most 10 GiB).
const MaxPart = 10 << 30

// ErrBadArchive reports a live photo zip quak will not unpack.
var ErrBadArchive = errors.New("unusable live photo archive")

// Part is one unpacked part in a temp file.
type Part struct {
	Ext  string // extension from the zip entry, with the dot, sanitized
	Path string // temp file in the destination folder
	Hash []byte // BLAKE2b-512 of the part
}

// Unpack extracts the image and video parts of the zip at path into temp
// files (named with prefix) in dir. On error no temp file remains.
func Unpack(path, dir, prefix string) (image, video *Part, err error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadArchive, err)
	}
	defer func() { _ = zr.Close() }()
	defer func() {
		if err != nil {
			for _, p := range []*Part{image, video} {
				if p != nil {
					_ = os.Remove(p.Path)
				}
			}
			image, video = nil, nil
		}
	}()
	if len(zr.File) != 2 {
		return nil, nil, fmt.Errorf("%w: %d entries, want an image and a video", ErrBadArchive, len(zr.File))
	}
	for _, zf := range zr.File {
		if err := check(zf); err != nil {
			return image, video, err
		}
		p, err := extract(zf, dir, prefix)
		if err != nil {
			return image, video, err
		}
		switch {
		case strings.HasPrefix(zf.Name, "image") && image == nil:
			image = p
		case strings.HasPrefix(zf.Name, "video") && video == nil:
			video = p
		default:
			_ = os.Remove(p.Path)
			return image, video, fmt.Errorf("%w: unexpected entry %q", ErrBadArchive, zf.Name)
		}
	}
	return image, video, nil
}

func check(zf *zip.File) error {
	name := zf.Name
	if name == "" || strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") || filepath.IsAbs(name) {
		return fmt.Errorf("%w: entry name %q has a path", ErrBadArchive, name)
	}
	if !zf.Mode().IsRegular() {
		return fmt.Errorf("%w: entry %q is not a regular file", ErrBadArchive, name)
	}
	if zf.UncompressedSize64 > MaxPart {
		return fmt.Errorf("%w: entry %q declares %d bytes", ErrBadArchive, name, zf.UncompressedSize64)
	}
	return nil
}

func extract(zf *zip.File, dir, prefix string) (p *Part, err error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadArchive, err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	h := keys.NewHash()
	declared := int64(zf.UncompressedSize64)
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(rc, declared+1))
	if err != nil {
		return nil, fmt.Errorf("%w: entry %q: %w", ErrBadArchive, zf.Name, err)
	}
	if n != declared {
		return nil, fmt.Errorf("%w: entry %q holds %d bytes, declares %d", ErrBadArchive, zf.Name, n, declared)
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	return &Part{Ext: ext(zf.Name), Path: tmp.Name(), Hash: h.Sum(nil)}, nil
}

// ext is the entry's extension if it is short and plain, else "".
func ext(name string) string {
	e := filepath.Ext(name)
	if len(e) < 2 || len(e) > 10 {
		return ""
	}
	for _, r := range e[1:] {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return ""
		}
	}
	return e
}

// HashMatches reports whether h is the base64 hash want.
func HashMatches(want string, h []byte) bool {
	w, err := keys.DecodeB64(want)
	return err == nil && bytes.Equal(w, h)
}
