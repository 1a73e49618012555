package secretstream

import (
	"encoding/binary"
	"errors"
	"io"
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
