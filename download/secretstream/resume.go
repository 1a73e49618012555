package secretstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/quak-photos/quak/errs"
)

// Checkpoint is a point a stream can be taken up again from: after Chunks
// whole chunks (Offset ciphertext bytes), every one authenticated and its
// plaintext handed out, with the stream state they left. It holds a subkey
// of the file key, so it lives in memory only, never on disk.
type Checkpoint struct {
	Offset int64
	Chunks int
	// MACXor is the XOR of the first 8 bytes of every chunk's MAC so far:
	// public bytes from the wire, from which Replay rebuilds the state.
	MACXor [8]byte
	k      [32]byte
	nonce  [12]byte
}

// Replay rebuilds the checkpoint after cp's chunks from the file key and
// header and cp's public fields (Offset, Chunks, MACXor), for a download
// taken up by a later run. It holds for Ente's streams, whose chunks before
// the last are all plain messages: each moves the state by XORing its MAC
// into the nonce and stepping the counter, with no rekey.
func Replay(key, header []byte, cp Checkpoint) (Checkpoint, error) {
	st, err := newState(key, header)
	if err != nil {
		return Checkpoint{}, err
	}
	if cp.Chunks < 1 || cp.Chunks >= 1<<31 {
		return Checkpoint{}, errors.New("secretstream: a checkpoint must follow at least one chunk")
	}
	for i := 0; i < 8; i++ {
		st.nonce[4+i] ^= cp.MACXor[i]
	}
	binary.LittleEndian.PutUint32(st.nonce[:4], uint32(1+cp.Chunks))
	cp.k, cp.nonce = st.k, st.nonce
	return cp, nil
}

// Start is the checkpoint before a stream's first chunk, under the file
// key and header: a download whose first chunk a former run fetched but
// never decrypted is taken up from there.
func Start(key, header []byte) (Checkpoint, error) {
	st, err := newState(key, header)
	if err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{k: st.k, nonce: st.nonce}, nil
}

// Checkpoint returns the point after the last chunk whose plaintext was
// handed out whole, and false before the first such chunk. A FINAL chunk
// makes none: a finished stream needs no resuming.
func (r *Reader) Checkpoint() (Checkpoint, bool) {
	r.settle()
	return r.cp, r.cp.Chunks > 0
}

// settle promotes the checkpoint of the chunk just read once its plaintext
// is all handed out.
func (r *Reader) settle() {
	if len(r.out) == 0 && r.hasNext {
		r.cp, r.hasNext = r.next, false
		if r.OnCheckpoint != nil {
			r.OnCheckpoint(r.cp)
		}
	}
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
		src:    limited,
		raw:    src,
		st:     st,
		buf:    takeBuf(headroom + int(max(wire, 1))),
		chunk:  ChunkSize + Overhead,
		chunks: cp.Chunks,
		got:    cp.Offset,
		want:   size,
		cp:     cp,
		macXor: cp.MACXor,
		plain:  true,
	}, nil
}

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

// after is the checkpoint one chunk of wire bytes with mac past cp, in
// state st.
func (cp Checkpoint) after(st *state, wire int64, mac [8]byte) Checkpoint {
	next := Checkpoint{Offset: cp.Offset + wire, Chunks: cp.Chunks + 1, MACXor: cp.MACXor, k: st.k, nonce: st.nonce}
	for i := range next.MACXor {
		next.MACXor[i] ^= mac[i]
	}
	return next
}
