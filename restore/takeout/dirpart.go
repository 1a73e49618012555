package takeout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
)

// scanDir lists a folder part, reading its metadata JSON. Links are never
// followed: a Takeout holds none, and one could lead out of it.
func (p *part) scanDir(ctx context.Context, s *scanned) error {
	pos := 0
	return filepath.WalkDir(p.path, func(file string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e := &entry{p: p, name: dirName(p.path, file), file: file, pos: pos}
		pos++
		if err != nil {
			if file == p.path {
				return err
			}
			s.skip(e, SkipUnreadable, err.Error())
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			s.skip(e, SkipLink, "")
			return nil
		case !d.Type().IsRegular():
			s.skip(e, SkipNotMedia, "not a plain file")
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			s.skip(e, SkipUnreadable, err.Error())
			return nil
		}
		e.size, e.mod = fi.Size(), fi.ModTime().UnixMicro()
		p.entries = append(p.entries, e)
		s.add(e, func() ([]byte, error) { return p.readFile(e) })
		return nil
	})
}

func (p *part) readFile(e *entry) ([]byte, error) {
	rc, err := p.openFile(e)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	return readCapped(rc)
}

// openFile opens a folder part's file; its reader fails when the file
// holds more or fewer bytes than when it was listed.
func (p *part) openFile(e *entry) (io.ReadCloser, error) {
	f, err := p.open(e.file)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("no longer a plain file")
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &sizedReader{r: f, c: f, left: e.size}, nil
}

// sizedReader reads exactly left bytes, failing on fewer or more.
type sizedReader struct {
	r    io.Reader
	c    io.Closer
	left int64
}

// errSizeChanged is a file whose size changed since it was listed.
var errSizeChanged = fmt.Errorf("its size changed since it was listed")

func (s *sizedReader) Read(b []byte) (int, error) {
	if s.left <= 0 {
		var one [1]byte
		if n, _ := s.r.Read(one[:]); n > 0 {
			return 0, errSizeChanged
		}
		return 0, io.EOF
	}
	if int64(len(b)) > s.left {
		b = b[:s.left]
	}
	n, err := s.r.Read(b)
	s.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if s.left > 0 {
			return n, errSizeChanged
		}
		err = nil
	}
	return n, err
}

func (s *sizedReader) Close() error { return s.c.Close() }
