package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/download/folder"
)

// NotPlainError reports a part of the source that is not a plain file: a
// symbolic link, a FIFO, a device, a socket or a folder. quak reads
// nothing else: opening or reading a FIFO or a device can wait for ever.
type NotPlainError struct {
	Path string
	What string // "a FIFO", "a device"…
}

func (e *NotPlainError) Error() string {
	return fmt.Sprintf("%s is %s, not a plain file; quak reads only plain files", filepath.Base(e.Path), e.What)
}

// openPlain opens the file at path to read if it is a plain file: never
// through a symbolic link, and never a FIFO or a device, whose open could
// wait for a writer that never comes. Errors: *NotPlainError, or the
// open's.
func openPlain(path string) (*os.File, fs.FileInfo, error) {
	if err := noLinkBefore(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|plainFlags, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &NotPlainError{Path: path, What: kindOf(fi.Mode())}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotPlainError{Path: path, What: kindOf(fi.Mode())}
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// plainParts refuses, without opening anything, an original whose parts
// are not plain files: what a dry run can tell of what the run would
// refuse.
func plainParts(o *original) error {
	for _, p := range o.parts {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return &NotPlainError{Path: p, What: kindOf(fi.Mode())}
		}
	}
	return nil
}

// kindOf names what a file of mode m is.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return "not a plain file"
}

// statOf is a source file's size and modification time, as a journal
// keeps them.
func statOf(fi fs.FileInfo) folder.SourceStat {
	return folder.SourceStat{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}

// ChangedError reports a source file that changed while quak read it, or
// since it was encrypted for its upload: what is sent must be the bytes
// the upload was prepared from.
type ChangedError struct {
	Path string
	Why  string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed %s; quak sends only a file that holds still: run again once nothing writes it", filepath.Base(e.Path), e.Why)
}

// Unwrap makes a ChangedError an ErrChanged.
func (e *ChangedError) Unwrap() error { return ErrChanged }

// plainReader reads an open plain file that must hold its size and its
// modification time from its opening to its end: one that grows, shrinks
// or is written as it is read ends in a *ChangedError. It stops with ctx.
type plainReader struct {
	ctx  context.Context
	f    *os.File
	path string
	was  folder.SourceStat
	n    int64
}

func (p *plainReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.f.Read(b)
	p.n += int64(n)
	if p.n > p.was.Size {
		return n, &ChangedError{Path: p.path, Why: "while quak read it (it grew)"}
	}
	if !errors.Is(err, io.EOF) {
		return n, err
	}
	fi, serr := p.f.Stat()
	switch {
	case p.n < p.was.Size:
		return n, &ChangedError{Path: p.path, Why: "while quak read it (it shrank)"}
	case serr != nil:
		return n, serr
	case statOf(fi) != p.was:
		return n, &ChangedError{Path: p.path, Why: "while quak read it (it was written)"}
	}
	return n, err
}

// readPlain opens the plain file at path for one pass that must find it
// as it was (want), or as it is when want is nil. close ends it.
func readPlain(ctx context.Context, path string, want *folder.SourceStat) (*plainReader, func(), error) {
	f, fi, err := openPlain(path)
	if err != nil {
		return nil, nil, err
	}
	now := statOf(fi)
	if want != nil && now != *want {
		_ = f.Close()
		return nil, nil, &ChangedError{Path: path, Why: "since it was encrypted for its upload"}
	}
	return &plainReader{ctx: ctx, f: f, path: path, was: now}, func() { _ = f.Close() }, nil
}
