package secretstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Writer encrypts what is written to it as Ente's chunked secretstream and
// writes the ciphertext to dst. The last chunk, written by Close, carries the
// FINAL tag; a stream whose length is a multiple of the chunk size ends with
// a full FINAL chunk, and an empty one is a single empty FINAL message.
type Writer struct {
	dst   io.Writer
	st    *state
	buf   []byte // 64 bytes of tag block, one plaintext chunk, 16 for the MAC
	n     int    // plaintext bytes buffered
	chunk int
	err   error
}

var errClosed = errors.New("secretstream: write to a closed Writer")

// NewWriter returns a Writer of 4 MiB chunks. Use NewHeader for a fresh
// random header; reusing a (key, header) pair breaks confidentiality.
func NewWriter(dst io.Writer, key, header []byte) (*Writer, error) {
	return newWriter(dst, key, header, ChunkSize)
}

func newWriter(dst io.Writer, key, header []byte, chunkSize int) (*Writer, error) {
	st, err := newState(key, header)
	if err != nil {
		return nil, err
	}
	return &Writer{dst: dst, st: st, buf: make([]byte, 64+min(chunkSize, 64<<10)+16), chunk: chunkSize}, nil
}

// Write buffers p and writes every chunk known not to be the last.
func (w *Writer) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.err != nil {
			return written, w.err
		}
		if w.n == w.chunk {
			w.err = w.flush(TagMessage)
			continue
		}
		if need := 64 + min(w.n+len(p), w.chunk) + 16; need > len(w.buf) {
			// Grow towards a whole chunk only as data arrives: small
			// streams never pay for a 4 MiB buffer.
			grown := make([]byte, min(max(need, 2*len(w.buf)), 64+w.chunk+16))
			copy(grown, w.buf[:64+w.n])
			w.buf = grown
		}
		c := copy(w.buf[64+w.n:len(w.buf)-16], p)
		w.n += c
		written += c
		p = p[c:]
	}
	return written, w.err
}

// Close writes the FINAL chunk. It does not close dst.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.flush(TagFinal); err != nil {
		w.err = err
		return err
	}
	w.err = errClosed
	return nil
}

func (w *Writer) flush(tag byte) error {
	wire := w.st.seal(w.buf[:64+w.n+16], tag)
	w.n = 0
	_, err := w.dst.Write(wire)
	return err
}

// NewHeader reads a fresh header from rand (crypto/rand.Reader in production).
func NewHeader(rand io.Reader) ([]byte, error) {
	h := make([]byte, HeaderSize)
	_, err := io.ReadFull(rand, h)
	return h, err
}

// Encrypt returns the whole chunked secretstream of plaintext.
func Encrypt(key, header, plaintext []byte) ([]byte, error) {
	return encrypt(key, header, plaintext, ChunkSize)
}

// SealBlob returns plaintext encrypted as a single FINAL message.
func SealBlob(key, header, plaintext []byte) ([]byte, error) {
	return encrypt(key, header, plaintext, max(len(plaintext), 1))
}

// EncryptBlob seals plaintext as an Ente blob (metadata, magic metadata,
// thumbnail) under key with a fresh header read from rand, and returns the
// ciphertext and the header.
func EncryptBlob(rand io.Reader, key, plaintext []byte) (ciphertext, header []byte, err error) {
	header, err = NewHeader(rand)
	if err != nil {
		return nil, nil, fmt.Errorf("secretstream: making a header: %w", err)
	}
	ciphertext, err = SealBlob(key, header, plaintext)
	if err != nil {
		return nil, nil, err
	}
	return ciphertext, header, nil
}

func encrypt(key, header, plaintext []byte, chunkSize int) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(plaintext) + Overhead*(len(plaintext)/chunkSize+1))
	w, err := newWriter(&out, key, header, chunkSize)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(plaintext); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// CiphertextSize is the length of the chunked stream of n plaintext bytes.
func CiphertextSize(n int64) int64 {
	full, rest := n/ChunkSize, n%ChunkSize
	size := full * (ChunkSize + Overhead)
	if rest > 0 || n == 0 {
		size += rest + Overhead
	}
	return size
}
