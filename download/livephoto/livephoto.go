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
	"time"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/durable"
)

// MaxPart bounds a declared part size (Ente's files are at most 10 GiB):
// the zip-bomb limit. A var only so tests can lower it.
var MaxPart uint64 = 10 << 30

// ErrBadArchive reports a live photo zip quak will not unpack.
var ErrBadArchive = errors.New("unusable live photo archive")

// Part is one unpacked part in a temp file.
type Part struct {
	Ext  string // extension from the zip entry, with the dot, sanitized
	Path string // temp file in the destination folder
	Hash []byte // BLAKE2b-512 of the part
	temp *durable.Temp
}

// Commit gives the part its final name, mode and modification time (see
// durable.Temp.Commit).
func (p *Part) Commit(final string, mode os.FileMode, mtime time.Time) error {
	return p.temp.Commit(final, mode, mtime)
}

// Result is what an archive gave: its image and video (either may be nil
// when the archive lacks it), and the anomalies met on the way.
type Result struct {
	Image, Video *Part
	// Anomalies name what was wrong and left out: entries with paths or
	// links, extra entries, a missing part, sizes beyond the declared.
	Anomalies []string
}

// Remove deletes the temp files of the parts not committed.
func (r *Result) Remove() {
	for _, p := range []*Part{r.Image, r.Video} {
		if p != nil {
			p.temp.Discard()
		}
	}
}

// Unpack extracts the image and video parts of the zip at path into temp
// files in dir. Entries from other people are not
// trusted: one whose name has a path, that is not a regular file, that
// declares more than MaxPart or holds more than it declares, or that is
// not the first image or video, is never extracted and is reported as an
// anomaly; the good parts are kept, since losing a photo because its
// archive is odd is the worse outcome. It fails (ErrBadArchive) only when
// no part can be saved; then no temp file remains.
func Unpack(path, dir string) (res *Result, err error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadArchive, err)
	}
	defer func() { _ = zr.Close() }()
	res = &Result{}
	defer func() {
		if err != nil {
			res.Remove()
			res = nil
		}
	}()
	for _, zf := range zr.File {
		var slot **Part
		switch {
		case strings.HasPrefix(zf.Name, "image") && res.Image == nil:
			slot = &res.Image
		case strings.HasPrefix(zf.Name, "video") && res.Video == nil:
			slot = &res.Video
		default:
			res.Anomalies = append(res.Anomalies, fmt.Sprintf("entry %q is neither its image nor its video; left out", zf.Name))
			continue
		}
		if err := check(zf); err != nil {
			res.Anomalies = append(res.Anomalies, err.Error()+"; left out")
			continue
		}
		p, err := extract(zf, dir)
		if errors.Is(err, ErrBadArchive) {
			res.Anomalies = append(res.Anomalies, err.Error()+"; left out")
			continue
		}
		if err != nil {
			return res, err
		}
		*slot = p
	}
	switch {
	case res.Image == nil && res.Video == nil:
		return res, fmt.Errorf("%w: no usable image or video entry (%s)", ErrBadArchive, strings.Join(res.Anomalies, "; "))
	case res.Image == nil:
		res.Anomalies = append(res.Anomalies, "the archive has no usable image; only the video was saved")
	case res.Video == nil:
		res.Anomalies = append(res.Anomalies, "the archive has no usable video; only the image was saved")
	}
	return res, nil
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

func extract(zf *zip.File, dir string) (p *Part, err error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadArchive, err)
	}
	defer rc.Close()
	tmp, err := durable.CreateTemp(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tmp.Discard()
		}
	}()
	h := keys.NewHash()
	declared := int64(zf.UncompressedSize64)
	n, err := io.Copy(io.MultiWriter(tmp.File(), h), io.LimitReader(rc, declared+1))
	if err != nil {
		return nil, fmt.Errorf("%w: entry %q: %w", ErrBadArchive, zf.Name, err)
	}
	if n != declared {
		return nil, fmt.Errorf("%w: entry %q holds %d bytes, declares %d", ErrBadArchive, zf.Name, n, declared)
	}
	return &Part{Ext: ext(zf.Name), Path: tmp.Name(), Hash: h.Sum(nil), temp: tmp}, nil
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
