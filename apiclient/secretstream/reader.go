package secretstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/quak-photos/quak/errs"
)

// Reader decrypts a secretstream read from a source, one whole chunk at a
// time. It is not safe for concurrent use.
//
// Read returns io.EOF only after a FINAL chunk authenticated and the source
// was proven empty. Other outcomes are sticky errors:
//   - *errs.TruncatedStreamError when the source ends before a FINAL chunk,
//     ends inside a chunk, or has bytes after the FINAL chunk;
//   - an error wrapping errs.ErrCorrupted when a chunk fails authentication;
//   - the source's own error, wrapped, when reading it fails.
type Reader struct {
	src    io.Reader // where chunks are read: raw, or raw limited to the expected size
	raw    io.Reader
	st     *state
	buf    []byte // headroom + one wire chunk
	chunk  int    // wire chunk size: plaintext chunk size + Overhead
	chunks int
	got    int64
	want   int64
	macXor [8]byte
	plain  bool // every chunk so far was a plain message (Replay holds)
	// handout holds the authenticated plaintext not yet handed out, and
	// the checkpoints; its OnCheckpoint, if set, hears of each new one as
	// it settles.
	handout
}

// NewReader returns a Reader of Ente's 4 MiB-chunked stream in src under key
// and header. size is the expected ciphertext length, or -1 when unknown;
// when known, a short last chunk that fails authentication at exactly that
// length is reported as corruption rather than as truncation.
func NewReader(key, header []byte, src io.Reader, size int64) (*Reader, error) {
	return newReader(key, header, src, size, ChunkSize)
}

func newReader(key, header []byte, src io.Reader, size int64, chunkSize int) (*Reader, error) {
	st, err := newState(key, header)
	if err != nil {
		return nil, err
	}
	if chunkSize <= 0 {
		panic("secretstream: internal error: chunk size must be positive")
	}
	limited := src
	wire := int64(chunkSize + Overhead)
	if size >= 0 {
		limited = &io.LimitedReader{R: src, N: size}
		// A stream shorter than one chunk needs a buffer only as long as
		// itself (plus one byte, to notice more data).
		wire = min(wire, size+1)
	}
	return &Reader{
		src:   limited,
		raw:   src,
		st:    st,
		buf:   takeBuf(headroom + int(wire)),
		chunk: chunkSize + Overhead,
		want:  size,
		plain: true,
	}, nil
}

// Resume returns a Reader that takes the stream up at cp: src must yield
// the ciphertext from cp.Offset on, and size is the whole stream's length
// (or -1). It checks exactly what NewReader's does, from there.
func Resume(cp Checkpoint, src io.Reader, size int64) (*Reader, error) {
	st := &state{k: cp.k, nonce: cp.nonce}
	if err := st.initAEAD(); err != nil {
		return nil, err
	}
	limited := src
	wire := int64(ChunkSize + Overhead)
	if size >= 0 {
		limited = &io.LimitedReader{R: src, N: max(size-cp.Offset, 0)}
		wire = min(wire, size-cp.Offset+1)
	}
	return &Reader{
		src:     limited,
		raw:     src,
		st:      st,
		buf:     takeBuf(headroom + int(max(wire, 1))),
		chunk:   ChunkSize + Overhead,
		chunks:  cp.Chunks,
		got:     cp.Offset,
		want:    size,
		handout: handout{cp: cp},
		macXor:  cp.MACXor,
		plain:   true,
	}, nil
}

// Release gives r's buffer back for other Readers to use. r is unusable
// afterwards: every Read fails. Call it once the stream's bytes are written
// wherever they go (nothing may still hold a slice of them).
func (r *Reader) Release() {
	if r.buf != nil {
		giveBuf(r.buf)
	}
	r.buf, r.out, r.err = nil, nil, errReleased
}

// errReleased is what a Reader says once its buffer is given back.
var errReleased = errors.New("secretstream: reader used after Release")

// reset makes r read a new stream from the same source, keeping its buffer.
func (r *Reader) reset(key, header []byte, size int64) {
	st, err := newState(key, header)
	if err != nil {
		panic("secretstream: internal error: " + err.Error())
	}
	r.st, r.chunks, r.got, r.want, r.macXor, r.plain = st, 0, 0, size, [8]byte{}, true
	r.handout = handout{OnCheckpoint: r.OnCheckpoint}
	r.src = r.raw
	if size >= 0 {
		r.src = &io.LimitedReader{R: r.raw, N: size}
	}
}

// Read hands out decrypted bytes, reading and authenticating a whole chunk
// whenever none are pending.
func (r *Reader) Read(p []byte) (int, error) { return r.read(p, r.readChunk) }

// WriteTo writes the whole decrypted stream to w, one chunk per Write, and
// returns nil only when the stream was complete.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if len(r.out) > 0 {
			n, err := w.Write(r.out)
			total += int64(n)
			r.out = r.out[n:]
			if err != nil {
				return total, err
			}
			continue
		}
		r.settle()
		if r.err != nil {
			if errors.Is(r.err, io.EOF) {
				return total, nil
			}
			return total, r.err
		}
		r.err = r.readChunk()
	}
}

// readChunk reads, authenticates and decrypts the next chunk into r.out, and
// returns io.EOF once the stream has ended properly.
func (r *Reader) readChunk() error {
	if r.st == nil {
		return io.EOF
	}
	wire := r.buf[headroom:min(headroom+r.chunk, len(r.buf))]
	n, err := io.ReadFull(r.src, wire)
	r.got += int64(n)
	partial := false
	switch {
	case errors.Is(err, io.EOF):
		return r.truncated(errs.NoFinal)
	case errors.Is(err, io.ErrUnexpectedEOF):
		partial = true
	case err != nil:
		return fmt.Errorf("secretstream: reading chunk %d: %w", r.chunks, err)
	}
	if n < Overhead {
		return r.truncated(errs.PartialChunk)
	}
	tag, err := r.st.open(r.buf[:headroom+n])
	if err != nil {
		if partial && (r.want < 0 || r.got < r.want) {
			// A cut inside the last chunk and a damaged last chunk look
			// alike; without a known size, a cut is the likelier cause.
			return r.truncated(errs.PartialChunk)
		}
		return fmt.Errorf("secretstream: chunk %d: %w", r.chunks, err)
	}
	r.chunks++
	mac := r.buf[headroom+n-16 : headroom+n]
	for i := range r.macXor {
		r.macXor[i] ^= mac[i]
	}
	r.plain = r.plain && tag == TagMessage
	if tag != TagFinal {
		if partial {
			return r.truncated(errs.NoFinal)
		}
		r.out = r.buf[64 : 64+n-Overhead]
		if r.plain {
			r.made(Checkpoint{Offset: r.got, Chunks: r.chunks, MACXor: r.macXor, k: r.st.k, nonce: r.st.nonce})
		}
		return nil
	}
	if err := r.expectEnd(); err != nil {
		return err
	}
	if r.want >= 0 && r.got != r.want {
		return r.truncated(errs.ShortOfSize)
	}
	r.out = r.buf[64 : 64+n-Overhead]
	r.st = nil
	return nil
}

// expectEnd proves that the source has nothing after the FINAL chunk.
func (r *Reader) expectEnd() error {
	var one [1]byte
	n, err := io.ReadFull(r.raw, one[:])
	r.got += int64(n)
	switch {
	case n > 0:
		return r.truncated(errs.TrailingData)
	case errors.Is(err, io.EOF):
		return nil
	default:
		return fmt.Errorf("secretstream: reading past the final chunk: %w", err)
	}
}

func (r *Reader) truncated(reason errs.TruncReason) error {
	return &errs.TruncatedStreamError{Reason: reason, Chunks: r.chunks, Got: r.got, Want: r.want}
}

// OpenBlob decrypts an Ente "blob": a secretstream of exactly one FINAL
// message, as used for metadata and thumbnails. Errors are as for Reader.
func OpenBlob(key, header, ciphertext []byte) ([]byte, error) {
	chunk := len(ciphertext) - Overhead
	if chunk < 1 {
		chunk = 1
	}
	r, err := newReader(key, header, bytes.NewReader(ciphertext), int64(len(ciphertext)), chunk)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return io.ReadAll(r)
}
