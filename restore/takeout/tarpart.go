package takeout

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/quak-photos/quak/apiclient/keys"
)

// errGzipChecksum explains a tgz whose bytes do not add up to the checksum
// at its end: some entry of it is damaged, and nothing tells which.
var errGzipChecksum = errors.New("its gzip checksum does not match: some file in it is damaged and nothing tells which, so none of it is imported; download this part again")

// tarStream is one pass over a tgz part: its entries in archive order.
type tarStream struct {
	f  partFile
	gz *gzip.Reader
	tr *tar.Reader
}

func (p *part) openTar() (*tarStream, error) {
	f, err := p.open(p.path)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &tarStream{f: f, gz: gz, tr: tar.NewReader(gz)}, nil
}

func (t *tarStream) close() { _ = t.f.Close() }

// finish reads what follows the archive's end to the gzip trailer, whose
// checksum covers every byte of the part.
func (t *tarStream) finish() error {
	_, err := io.Copy(io.Discard, t.gz)
	if errors.Is(err, gzip.ErrChecksum) {
		return errGzipChecksum
	}
	return err
}

// next returns the next plain file's header and its position, passing
// over folders; links and other special entries are given to skip.
func (t *tarStream) next(pos *int, skip func(h *tar.Header)) (*tar.Header, error) {
	for {
		h, err := t.tr.Next()
		if err != nil {
			return nil, err
		}
		*pos++
		switch h.Typeflag {
		case tar.TypeReg: // the reader reports the old TypeRegA as TypeReg
			return h, nil
		case tar.TypeDir:
		default:
			skip(h)
		}
	}
}

// scanTar is a tgz's first pass: every entry's name and size, every JSON
// read, and every photo and video hashed (Ente's hash and CRC-32: its
// identity) and dated from its own bytes, so that the second pass reads
// only what is to be uploaded. A part damaged along the way keeps the
// entries read whole before the damage; one whose checksum fails at the end
// keeps none.
func (p *part) scanTar(ctx context.Context, s *scanned, loc *time.Location) error {
	t, err := p.openTar()
	if err != nil {
		p.fail(fmt.Errorf("not a readable tgz: %w", err))
		return nil
	}
	defer t.close()
	var kept []*entry
	pos := -1
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := t.next(&pos, func(h *tar.Header) {
			e := &entry{p: p, name: h.Name, pos: pos}
			if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
				s.skip(e, SkipLink, "")
			} else {
				s.skip(e, SkipNotMedia, "not a plain file")
			}
		})
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			p.fail(fmt.Errorf("damaged after %d entries: %w", len(kept), err))
			break
		}
		e := &entry{p: p, name: h.Name, size: h.Size, mod: h.ModTime.UnixMicro(), pos: pos}
		if err := p.scanTarEntry(s, t.tr, e, loc); err != nil {
			p.fail(fmt.Errorf("damaged after %d entries: %w", len(kept), err))
			break
		}
		kept = append(kept, e)
	}
	if p.damaged == nil {
		if err := t.finish(); err != nil {
			p.fail(err)
			s.drop(p)
			return nil
		}
	}
	p.entries = kept
	return nil
}

// scanTarEntry reads one entry of the first pass: a photo or video is
// hashed and dated as it streams past, a JSON read; the rest is passed over.
func (p *part) scanTarEntry(s *scanned, r io.Reader, e *entry, loc *time.Location) error {
	var readErr error
	read := func() ([]byte, error) {
		b, err := readCapped(r)
		readErr = err
		return b, err
	}
	_, base, _, _ := takeoutName(e.name)
	if fileType(base) >= 0 && !isJunk(base) {
		e.base = base
		if err := e.identify(r, loc); err != nil {
			return err
		}
		s.add(e, nil)
		return nil
	}
	s.add(e, read)
	return readErr
}

// identify reads an entry's bytes to their end: its hash, CRC-32 and the
// date its bytes carry.
func (e *entry) identify(r io.Reader, loc *time.Location) error {
	h, c := keys.NewHash(), crc32.NewIEEE()
	sn := newSniffer(e.base)
	n, err := io.Copy(io.MultiWriter(h, c, sn), r)
	if err == nil && n != e.size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	e.hash, e.crc, e.hasCRC = keys.EncodeB64(h.Sum(nil)), c.Sum32(), true
	e.date = sn.date(loc)
	return nil
}

// drop forgets every entry a part gave: its checksum failed, so none can
// be trusted.
func (s *scanned) drop(p *part) {
	s.mu.Lock()
	defer s.mu.Unlock()
	media := s.media[:0]
	for _, e := range s.media {
		if e.p != p {
			media = append(media, e)
		}
	}
	s.media = media
	docs := s.docs[:0]
	for _, d := range s.docs {
		if d.e.p != p {
			docs = append(docs, d)
		}
	}
	s.docs = docs
	p.report.JSON = 0
}
