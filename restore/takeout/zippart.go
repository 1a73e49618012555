package takeout

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"math"
	"os"
)

// zipPart is an open zip part: its central directory gives every entry's
// name, size and CRC-32 without reading the entries, and each entry is
// read where it lies.
type zipPart struct {
	f  partFile
	zr *zip.Reader
}

// errZipDamaged explains a zip whose directory cannot be read: most often
// a download cut short, whose directory (at the end) never arrived.
var errZipDamaged = errors.New("its directory cannot be read (a download cut short, or a damaged file): nothing of it can be imported; download this part again")

// scanZip lists a zip part and reads its metadata JSON.
func (p *part) scanZip(ctx context.Context, s *scanned) error {
	f, err := p.open(p.path)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, p.size)
	if err != nil {
		_ = f.Close()
		p.fail(errZipDamaged)
		return nil
	}
	p.zip = &zipPart{f: f, zr: zr}
	for i, zf := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		if zf.Mode().IsDir() {
			continue
		}
		e := &entry{p: p, name: zf.Name, size: declared(zf.UncompressedSize64), crc: zf.CRC32, hasCRC: true,
			mod: zf.Modified.UnixMicro(), pos: i, zipAt: i}
		if zf.Mode()&os.ModeSymlink != 0 {
			s.skip(e, SkipLink, "")
			continue
		}
		p.entries = append(p.entries, e)
		s.add(e, func() ([]byte, error) { return readZipEntry(zf) })
	}
	return nil
}

// declared is the size a zip's directory gives an entry, as an int64: a
// size beyond it (no file has one) is the largest int64, too large for
// Ente, never negative.
func declared(n uint64) int64 {
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}

func readZipEntry(zf *zip.File) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	return readCapped(rc)
}

// openZip opens an entry of a zip part; the reader fails at its end when
// the bytes do not match the directory's CRC-32 (zip.ErrChecksum).
func (p *part) openZip(e *entry) (io.ReadCloser, error) {
	return p.zip.zr.File[e.zipAt].Open()
}

func (p *part) close() {
	if p.zip != nil {
		_ = p.zip.f.Close()
	}
}
