package keys

//go:generate go run gen_blake2b.go

import (
	"encoding/binary"
	"errors"
)

// BLAKE2b's sizes: Size is the longest digest, and Ente's content hash.
const (
	BlockSize = 128
	Size      = 64
)

var blake2bIV = [8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}

// digest is a streaming BLAKE2b (RFC 7693) with the whole parameter block:
// libsodium's KDF needs its salt and personalization, which
// golang.org/x/crypto/blake2b does not expose. Its compression is
// generated with the rounds unrolled (blake2b_blocks.go), which runs
// about 1.6 times as fast as x/crypto's AVX2 code on the machines quak was
// measured on: hashing is a quarter of the CPU a backup of large files
// costs.
type digest struct {
	h      [8]uint64
	c      [2]uint64 // bytes compressed so far, 128 bits
	size   int
	block  [BlockSize]byte
	offset int // bytes of block taken; a full block waits for more

	init  [8]uint64 // h after the parameter block, for Reset
	keyed bool
	key   [BlockSize]byte
}

func newDigest(size int, key, salt, person []byte) *digest {
	d := &digest{size: size}
	var p [64]byte
	p[0], p[1], p[2], p[3] = byte(size), byte(len(key)), 1, 1
	copy(p[32:48], salt)
	copy(p[48:64], person)
	for i := range d.init {
		d.init[i] = blake2bIV[i] ^ binary.LittleEndian.Uint64(p[8*i:])
	}
	if len(key) > 0 {
		d.keyed = true
		copy(d.key[:], key)
	}
	d.Reset()
	return d
}

// blake2b computes BLAKE2b with the salt and personalization fields of its
// parameter block, as libsodium's crypto_kdf_derive_from_key needs. size is
// 1..64, key 0..64 bytes, salt and person at most 16 bytes each
// (zero-padded).
func blake2b(size int, key, msg, salt, person []byte) []byte {
	d := newDigest(size, key, salt, person)
	_, _ = d.Write(msg)
	return d.Sum(nil)
}

func (d *digest) Size() int      { return d.size }
func (d *digest) BlockSize() int { return BlockSize }

func (d *digest) Reset() {
	d.h, d.c, d.offset = d.init, [2]uint64{}, 0
	if d.keyed {
		// A key is the first block of the message.
		d.block, d.offset = d.key, BlockSize
	}
}

func (d *digest) Write(p []byte) (int, error) {
	n := len(p)
	if d.offset > 0 {
		room := BlockSize - d.offset
		if len(p) <= room {
			d.offset += copy(d.block[d.offset:], p)
			return n, nil
		}
		copy(d.block[d.offset:], p[:room])
		hashBlocks(&d.h, &d.c, 0, d.block[:])
		d.offset = 0
		p = p[room:]
	}
	// Whole blocks go straight through, but the last one waits: it is
	// compressed differently if nothing follows it.
	if len(p) > BlockSize {
		whole := (len(p) - 1) &^ (BlockSize - 1)
		hashBlocks(&d.h, &d.c, 0, p[:whole])
		p = p[whole:]
	}
	d.offset += copy(d.block[:], p)
	return n, nil
}

func (d *digest) Sum(b []byte) []byte {
	var last [BlockSize]byte
	copy(last[:], d.block[:d.offset])
	// hashBlocks counts a whole block; the last one holds offset bytes.
	h, c := d.h, d.c
	pad := uint64(BlockSize - d.offset)
	if c[0] < pad {
		c[1]--
	}
	c[0] -= pad
	hashBlocks(&h, &c, ^uint64(0), last[:])
	var out [Size]byte
	for i, w := range h {
		binary.LittleEndian.PutUint64(out[8*i:], w)
	}
	return append(b, out[:d.size]...)
}

// The marshalled state is golang.org/x/crypto/blake2b's: the "b2b" magic,
// h and the counter as big-endian words, the size, the pending block and
// its length.
const (
	stateMagic = "b2b"
	stateSize  = len(stateMagic) + 8*8 + 2*8 + 1 + BlockSize + 1
)

var errHashState = errors.New("keys: not a BLAKE2b-512 hash state")

func (d *digest) MarshalBinary() ([]byte, error) {
	if d.keyed {
		return nil, errors.New("keys: a keyed BLAKE2b is not marshalled")
	}
	b := make([]byte, 0, stateSize)
	b = append(b, stateMagic...)
	for _, w := range d.h {
		b = binary.BigEndian.AppendUint64(b, w)
	}
	b = binary.BigEndian.AppendUint64(b, d.c[0])
	b = binary.BigEndian.AppendUint64(b, d.c[1])
	b = append(b, byte(d.size))
	b = append(b, d.block[:]...)
	return append(b, byte(d.offset)), nil
}

// UnmarshalBinary takes up a state MarshalBinary wrote. One for another
// digest size, or with a pending block longer than a block, is refused, so
// a damaged state can only fail, never panic a later Write.
func (d *digest) UnmarshalBinary(b []byte) error {
	if len(b) != stateSize || string(b[:len(stateMagic)]) != stateMagic || d.keyed {
		return errHashState
	}
	b = b[len(stateMagic):]
	var h [8]uint64
	for i := range h {
		h[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	b = b[8*8:]
	c := [2]uint64{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
	b = b[16:]
	size, offset := int(b[0]), int(b[1+BlockSize])
	if size != d.size || offset > BlockSize {
		return errHashState
	}
	d.h, d.c, d.offset = h, c, offset
	copy(d.block[:], b[1:1+BlockSize])
	return nil
}
