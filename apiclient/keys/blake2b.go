package keys

import (
	"encoding/binary"
	"math/bits"
)

// blake2bIV is BLAKE2b's initialization vector (RFC 7693, section 2.6).
var blake2bIV = [8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}

// blake2bSigma is the message schedule (RFC 7693, section 2.7); rounds 10
// and 11 use rows 0 and 1 again.
var blake2bSigma = [10][16]byte{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

const blake2bBlockSize = 128

// blake2bSaltPersonal is libsodium's crypto_generichash_blake2b_salt_personal:
// BLAKE2b (RFC 7693) of msg with the salt and personalization fields of its
// parameter block, which golang.org/x/crypto/blake2b does not expose and
// libsodium's KDF needs. size is 1..64, key 0..64 bytes, salt and person at
// most 16 bytes each (zero-padded); the caller checks them. It hashes in
// one call and is not fast: Ente's content hash is x/crypto's (NewHash).
func blake2bSaltPersonal(size int, key, msg, salt, person []byte) []byte {
	var p [64]byte
	p[0], p[1], p[2], p[3] = byte(size), byte(len(key)), 1, 1 // fanout 1, depth 1
	copy(p[32:48], salt)
	copy(p[48:64], person)
	var h [8]uint64
	for i := range h {
		h[i] = blake2bIV[i] ^ binary.LittleEndian.Uint64(p[8*i:])
	}
	// A key is a first block of its own, zero-padded.
	var data []byte
	if len(key) > 0 {
		data = make([]byte, blake2bBlockSize, blake2bBlockSize+len(msg))
		copy(data, key)
	}
	data = append(data, msg...)
	var counter uint64 // bytes hashed so far; quak never hashes 2^64 here
	for len(data) > blake2bBlockSize {
		counter += blake2bBlockSize
		blake2bCompress(&h, data[:blake2bBlockSize], counter, false)
		data = data[blake2bBlockSize:]
	}
	// The last block, even an empty one, is zero-padded and flagged.
	var last [blake2bBlockSize]byte
	copy(last[:], data)
	blake2bCompress(&h, last[:], counter+uint64(len(data)), true)
	out := make([]byte, 64)
	for i, w := range h {
		binary.LittleEndian.PutUint64(out[8*i:], w)
	}
	return out[:size]
}

// blake2bCompress is BLAKE2b's compression function F (RFC 7693, section
// 3.2) of one 128-byte block, with counter the bytes hashed up to the end
// of it.
func blake2bCompress(h *[8]uint64, block []byte, counter uint64, last bool) {
	var m [16]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(block[8*i:])
	}
	var v [16]uint64
	copy(v[:8], h[:])
	copy(v[8:], blake2bIV[:])
	v[12] ^= counter // the counter's high word stays 0
	if last {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint64) {
		v[a] += v[b] + x
		v[d] = bits.RotateLeft64(v[d]^v[a], -32)
		v[c] += v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -24)
		v[a] += v[b] + y
		v[d] = bits.RotateLeft64(v[d]^v[a], -16)
		v[c] += v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -63)
	}
	for r := 0; r < 12; r++ {
		s := &blake2bSigma[r%10]
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range h {
		h[i] ^= v[i] ^ v[i+8]
	}
}
