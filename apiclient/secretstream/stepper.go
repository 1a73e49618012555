package secretstream

import (
	"fmt"

	"github.com/quak-photos/quak/errs"
)

// Stepper takes a checkpoint forward one chunk at a time over bytes kept
// on disk, without a Reader: ciphertext fetched ahead of a download that
// was cut, which must authenticate, or plaintext written past its last
// resume point, which must encrypt again to the MACs recorded for it. It
// holds one chunk's buffer; Release gives it back.
type Stepper struct {
	buf []byte // headroom + one wire chunk
}

// NewStepper returns a Stepper with a buffer of one whole chunk.
func NewStepper() *Stepper { return &Stepper{buf: takeBuf(fullBuf)} }

// Release gives the buffer back; s is unusable afterwards.
func (s *Stepper) Release() {
	if s.buf != nil {
		giveBuf(s.buf)
		s.buf = nil
	}
}

// Wire is where the ciphertext of a chunk to Open goes.
func (s *Stepper) Wire() []byte { return s.buf[headroom:] }

// Plain is where the plaintext of a chunk to Reseal goes.
func (s *Stepper) Plain() []byte { return s.buf[64 : 64+ChunkSize] }

// Open authenticates the first n bytes of Wire as the plain message chunk
// that follows cp and decrypts them in place. It returns the plaintext
// and the checkpoint after the chunk, or an error wrapping
// errs.ErrCorrupted when they are not that chunk (another chunk, another
// stream, damaged or partly written bytes, or a FINAL chunk, which makes
// no checkpoint).
func (s *Stepper) Open(cp Checkpoint, n int) ([]byte, Checkpoint, error) {
	if n <= Overhead || n > ChunkSize+Overhead {
		return nil, cp, fmt.Errorf("secretstream: %d bytes are no chunk: %w", n, errs.ErrCorrupted)
	}
	st := &state{k: cp.k, nonce: cp.nonce}
	if err := st.initAEAD(); err != nil {
		return nil, cp, err
	}
	var mac [8]byte
	copy(mac[:], s.buf[headroom+n-16:])
	tag, err := st.open(s.buf[:headroom+n])
	if err != nil {
		return nil, cp, err
	}
	if tag != TagMessage {
		return nil, cp, fmt.Errorf("secretstream: a chunk with tag %d ends no checkpoint: %w", tag, errs.ErrCorrupted)
	}
	return s.buf[64 : 64+n-Overhead], cp.after(st, int64(n), mac), nil
}

// Reseal encrypts the first n bytes of Plain, in place, as the plain
// message chunk that follows cp, and returns the checkpoint after it. Its
// MACXor is the one a Reader of the original stream reached exactly when
// those bytes are what it decrypted there; other bytes give another, but
// for a chance of 2^-64. Plain no longer holds the plaintext after.
func (s *Stepper) Reseal(cp Checkpoint, n int) (Checkpoint, error) {
	if n <= 0 || n > ChunkSize {
		return cp, fmt.Errorf("secretstream: %d bytes are no chunk's plaintext", n)
	}
	st := &state{k: cp.k, nonce: cp.nonce}
	if err := st.initAEAD(); err != nil {
		return cp, err
	}
	out := st.seal(s.buf[:64+n+16], TagMessage)
	var mac [8]byte
	copy(mac[:], out[len(out)-16:])
	return cp.after(st, int64(len(out)), mac), nil
}
