package download

import (
	"errors"
	"io"
	"os"
	"unsafe"
)

// directOpen opens the O_DIRECT descriptor; tests replace it.
var directOpen = func(path string) (directFile, error) { return openDirect(path) }

// directFile is what the writer needs of the O_DIRECT descriptor.
type directFile interface {
	WriteAt(b []byte, off int64) (int, error)
	Close() error
}

// directMin is the smallest download written around the page cache.
const directMin = 8 << 20

// directBlock is the alignment O_DIRECT asks of offsets, lengths and memory.
const directBlock = 4096

// directWriter writes a temp file's plaintext around the page cache: whole
// aligned blocks through a second, O_DIRECT descriptor, from an aligned
// buffer. On a large backup the kernel's copy of every written byte into
// the page cache is the biggest cost after the hash; this avoids it. Where
// the file system refuses O_DIRECT it falls back to ordinary writes. The
// temp file itself stays the ordinary *os.File: fsync, truncate, chmod and
// rename go through it.
type directWriter struct {
	plain  *os.File
	direct directFile // nil once fallen back
	buf    []byte     // aligned, a multiple of directBlock
	n      int
	off    int64 // file offset of buf[0]
}

// newDirectWriter writes to tmp from offset on (a multiple of the block
// size), or returns nil where O_DIRECT is not to be had.
func newDirectWriter(tmp *os.File, offset int64) *directWriter {
	if offset%directBlock != 0 {
		return nil
	}
	d, err := directOpen(tmp.Name())
	if err != nil {
		return nil
	}
	raw := make([]byte, 4<<20+directBlock)
	skip := (directBlock - int(uintptr(unsafe.Pointer(&raw[0]))%directBlock)) % directBlock
	return &directWriter{plain: tmp, direct: d, buf: raw[skip : skip+4<<20], off: offset}
}

func (w *directWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		c := copy(w.buf[w.n:], p)
		w.n += c
		p = p[c:]
		if w.n == len(w.buf) {
			if err := w.flush(w.n); err != nil {
				return total - len(p), err
			}
		}
	}
	return total, nil
}

// flush writes the first n bytes of the buffer (a multiple of the block
// size, or the whole tail at the end) at the writer's offset.
func (w *directWriter) flush(n int) error {
	if n == 0 {
		return nil
	}
	var err error
	if w.direct != nil && n%directBlock == 0 {
		_, err = w.direct.WriteAt(w.buf[:n], w.off)
		if errors.Is(err, errInvalid) {
			w.fallBack() // this file system takes no O_DIRECT writes after all
			_, err = w.plain.WriteAt(w.buf[:n], w.off)
		}
	} else {
		_, err = w.plain.WriteAt(w.buf[:n], w.off)
	}
	if err != nil {
		return err
	}
	w.off += int64(n)
	copy(w.buf, w.buf[n:w.n])
	w.n -= n
	return nil
}

func (w *directWriter) fallBack() {
	if w.direct != nil {
		_ = w.direct.Close()
		w.direct = nil
	}
}

// finish writes what is left (the aligned part around the cache, the tail
// through it), closes the direct descriptor and leaves the temp file's own
// offset at the end, as ordinary writes would have.
func (w *directWriter) finish() error {
	err := w.flush(w.n - w.n%directBlock)
	if err == nil {
		err = w.flush(w.n)
	}
	w.fallBack()
	if err != nil {
		return err
	}
	_, err = w.plain.Seek(w.off, io.SeekStart)
	return err
}

// close gives up the direct descriptor without writing the rest (a failed
// attempt: what a checkpoint covers is written already).
func (w *directWriter) close() { w.fallBack() }
