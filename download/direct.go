package download

import (
	"errors"
	"hash"
	"io"
	"os"
	"unsafe"

	"github.com/quak-photos/quak/apiclient/secretstream"
)

// copyOut writes r's plaintext to tmp (from offset base, directly to disk
// for large files) and to h, reporting progress to onBytes.
func copyOut(tmp *os.File, base, size int64, r *secretstream.Reader, h hash.Hash, onBytes func(int64)) (int64, error) {
	var out io.Writer = tmp
	var dw *directWriter
	if size >= directMin {
		if dw = newDirectWriter(tmp, base); dw != nil {
			out = dw
		}
	}
	w := io.MultiWriter(out, h)
	if onBytes != nil {
		w = io.MultiWriter(w, progress(onBytes))
	}
	n, err := r.WriteTo(w)
	if err == nil && dw != nil {
		err = dw.finish()
	}
	if err != nil && dw != nil {
		dw.close()
	}
	return n, err
}

// progress reports the length of every write.
type progress func(int64)

func (p progress) Write(b []byte) (int, error) {
	p(int64(len(b)))
	return len(b), nil
}

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
// aligned blocks through a second, O_DIRECT descriptor. On a large backup
// the kernel's copy of every written byte into the page cache is the
// biggest cost after the hash; this avoids it. A write whose memory and
// length are aligned (a whole chunk, decrypted in its aligned buffer) goes
// out as it is; anything else is gathered in a small aligned buffer of the
// writer's own, made on first need. Where the file system refuses O_DIRECT
// it falls back to ordinary writes. The temp file itself stays the
// ordinary *os.File: fsync, truncate, chmod and rename go through it.
type directWriter struct {
	plain  *os.File
	direct directFile // nil once fallen back
	buf    []byte     // aligned, a multiple of directBlock; nil until needed
	n      int
	off    int64 // file offset of buf[0]
}

// directBuf is the size of the writer's own buffer.
const directBuf = 256 << 10

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
	return &directWriter{plain: tmp, direct: d, off: offset}
}

// aligned reports whether p starts on a block boundary in memory.
func aligned(p []byte) bool { return uintptr(unsafe.Pointer(&p[0]))%directBlock == 0 }

func (w *directWriter) Write(p []byte) (int, error) {
	total := len(p)
	if w.n == 0 && len(p) >= directBlock && aligned(p) {
		k := len(p) - len(p)%directBlock
		if err := w.writeAt(p[:k]); err != nil {
			return 0, err
		}
		p = p[k:]
	}
	if len(p) > 0 && w.buf == nil {
		raw := make([]byte, directBuf+directBlock)
		skip := (directBlock - int(uintptr(unsafe.Pointer(&raw[0]))%directBlock)) % directBlock
		w.buf = raw[skip : skip+directBuf]
	}
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

// writeAt writes b (aligned, whole blocks) at the writer's offset, and
// moves it on.
func (w *directWriter) writeAt(b []byte) error {
	var err error
	if w.direct != nil {
		_, err = w.direct.WriteAt(b, w.off)
		if errors.Is(err, errInvalid) {
			w.fallBack() // this file system takes no O_DIRECT writes after all
			_, err = w.plain.WriteAt(b, w.off)
		}
	} else {
		_, err = w.plain.WriteAt(b, w.off)
	}
	if err == nil {
		w.off += int64(len(b))
	}
	return err
}

// flush writes the first n bytes of the buffer (a multiple of the block
// size, or the whole tail at the end) at the writer's offset.
func (w *directWriter) flush(n int) error {
	if n == 0 {
		return nil
	}
	var err error
	if n%directBlock == 0 {
		err = w.writeAt(w.buf[:n])
	} else {
		if _, err = w.plain.WriteAt(w.buf[:n], w.off); err == nil {
			w.off += int64(n)
		}
	}
	if err != nil {
		return err
	}
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
