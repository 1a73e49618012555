package secretstream

import (
	"errors"
	"fmt"
	"io"
)

// EncryptReader encrypts a plaintext source as Ente's chunked secretstream
// and hands the ciphertext out through Read, one chunk at a time, so an
// upload streams a file of any size through a buffer of one chunk. It is
// not safe for concurrent use.
//
// Under the same key and header the output is always the same bytes: a
// first pass can compute an upload's checksums and a second pass send
// them, with nothing of the file kept in between.
//
// A chunk is FINAL when the source ends within it or right after it, which
// the reader learns by reading one byte ahead: a plaintext of exactly n
// chunks ends with a full FINAL chunk, and an empty one is a single empty
// FINAL message. Read returns io.EOF after the FINAL chunk; an error of the
// source comes back wrapped, and every error is sticky.
type EncryptReader struct {
	src   io.Reader
	st    *state
	buf   []byte // 64 bytes of tag block, up to one chunk of plaintext, 16 for the MAC
	ahead [1]byte
	// hasAhead: ahead holds the byte read past the last full chunk.
	hasAhead bool
	chunk    int

	chunks  int   // chunks sealed
	sealed  int64 // ciphertext bytes sealed
	macXor  [8]byte
	handout // the ciphertext not yet handed out, and the checkpoints
}

// smallestBuf is the plaintext room a new EncryptReader starts with: a
// metadata blob or a thumbnail never pays for a 4 MiB buffer.
const smallestBuf = 64 << 10

// NewEncryptReader returns an EncryptReader of src under key and header in
// Ente's 4 MiB chunks. Use NewHeader for a fresh random header; encrypting
// other plaintext under a used (key, header) pair breaks confidentiality.
func NewEncryptReader(key, header []byte, src io.Reader) (*EncryptReader, error) {
	return newEncryptReader(key, header, src, ChunkSize)
}

func newEncryptReader(key, header []byte, src io.Reader, chunkSize int) (*EncryptReader, error) {
	st, err := newState(key, header)
	if err != nil {
		return nil, err
	}
	return newEncryptReaderFrom(st, src, chunkSize), nil
}

func newEncryptReaderFrom(st *state, src io.Reader, chunkSize int) *EncryptReader {
	if chunkSize <= 0 {
		panic("secretstream: internal error: chunk size must be positive")
	}
	return &EncryptReader{src: src, st: st, chunk: chunkSize,
		buf: make([]byte, 64+min(chunkSize, smallestBuf)+16)}
}

// ResumeEncrypt returns an EncryptReader that takes the stream up at cp,
// a checkpoint of an EncryptReader (or Replay's) under the same key and
// header: src must yield the plaintext from cp.Chunks whole chunks on, and
// the ciphertext read is the original stream's from cp.Offset on. A part
// of a multipart upload is sent again this way without encrypting what
// comes before it.
func ResumeEncrypt(cp Checkpoint, src io.Reader) (*EncryptReader, error) {
	return resumeEncrypt(cp, src, ChunkSize)
}

func resumeEncrypt(cp Checkpoint, src io.Reader, chunkSize int) (*EncryptReader, error) {
	if cp.Chunks < 1 {
		return nil, errors.New("secretstream: a checkpoint must follow at least one chunk")
	}
	st := &state{k: cp.k, nonce: cp.nonce}
	if err := st.initAEAD(); err != nil {
		return nil, err
	}
	r := newEncryptReaderFrom(st, src, chunkSize)
	r.chunks, r.sealed, r.macXor, r.cp = cp.Chunks, cp.Offset, cp.MACXor, cp
	return r, nil
}

// Read hands out ciphertext, sealing the next chunk whenever none is
// pending.
func (r *EncryptReader) Read(p []byte) (int, error) { return r.read(p, r.sealChunk) }

// sealChunk reads the next chunk of plaintext and seals it into r.out, or
// returns io.EOF once the FINAL chunk was sealed.
func (r *EncryptReader) sealChunk() error {
	if r.st == nil {
		return io.EOF
	}
	n, err := r.fill()
	tag := TagFinal
	switch {
	case err == nil:
		// A whole chunk: it is the last only if nothing follows it.
		m, aerr := io.ReadFull(r.src, r.ahead[:])
		switch {
		case m == 1:
			r.hasAhead, tag = true, TagMessage
		case !errors.Is(aerr, io.EOF):
			return fmt.Errorf("secretstream: reading plaintext after chunk %d: %w", r.chunks, aerr)
		}
	case !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("secretstream: reading plaintext of chunk %d: %w", r.chunks, err)
	}
	r.out = r.st.seal(r.buf[:64+n+16], tag)
	r.chunks++
	r.sealed += int64(len(r.out))
	mac := r.out[len(r.out)-16:]
	for i := range r.macXor {
		r.macXor[i] ^= mac[i]
	}
	if tag == TagFinal {
		r.st = nil
		return nil
	}
	r.made(Checkpoint{Offset: r.sealed, Chunks: r.chunks, MACXor: r.macXor, k: r.st.k, nonce: r.st.nonce})
	return nil
}

// fill reads up to one chunk of plaintext into r.buf after its 64-byte tag
// block, growing the buffer towards a whole chunk only while the source
// keeps filling it. It returns the plaintext length and nil for a whole
// chunk, else the error that ended the source (io.EOF or
// io.ErrUnexpectedEOF when it simply ended).
func (r *EncryptReader) fill() (int, error) {
	n := 0
	if r.hasAhead {
		r.buf[64], n, r.hasAhead = r.ahead[0], 1, false
	}
	for {
		m, err := io.ReadFull(r.src, r.buf[64+n:len(r.buf)-16])
		n += m
		if err != nil || n == r.chunk {
			return n, err
		}
		grown := make([]byte, 64+min(2*(len(r.buf)-80), r.chunk)+16)
		copy(grown, r.buf[:64+n])
		r.buf = grown
	}
}
