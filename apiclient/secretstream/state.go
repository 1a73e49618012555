package secretstream

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/poly1305" //nolint:staticcheck // secretstream is built from raw Poly1305, exactly as libsodium builds it

	"github.com/quak-photos/quak/errs"
)

// Sizes and tags of libsodium's crypto_secretstream_xchacha20poly1305 and of
// Ente's use of it.
const (
	KeySize    = 32      // key length
	HeaderSize = 24      // header length, stored by Ente as decryptionHeader
	Overhead   = 17      // bytes each message adds: encrypted tag byte and 16-byte MAC
	ChunkSize  = 4 << 20 // plaintext bytes in each of Ente's stream chunks

	TagMessage byte = 0 // a chunk with more to follow
	TagFinal   byte = 3 // the last chunk (libsodium's PUSH|REKEY)

	tagRekey = 2
)

// headroom is the space kept before a chunk in its buffer, so the 64-byte
// encrypted tag block can be rebuilt in place in front of the message body.
const headroom = 63

var errBadKey = errors.New("secretstream: key must be 32 bytes and header 24 bytes")

// state is one direction of a secretstream: the subkey, and the IETF nonce
// made of a little-endian 32-bit counter followed by the 8-byte inonce.
type state struct {
	k     [32]byte
	nonce [12]byte
	aead  cipher.AEAD // IETF ChaCha20-Poly1305 under k, for the fast path

	generic bool // never take the fast path (benchmarks compare the two)
}

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
	if cp.Chunks < 1 || int64(cp.Chunks) >= 1<<31 {
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

// after is the checkpoint one chunk of wire bytes with mac past cp, in
// state st.
func (cp Checkpoint) after(st *state, wire int64, mac [8]byte) Checkpoint {
	next := Checkpoint{Offset: cp.Offset + wire, Chunks: cp.Chunks + 1, MACXor: cp.MACXor, k: st.k, nonce: st.nonce}
	for i := range next.MACXor {
		next.MACXor[i] ^= mac[i]
	}
	return next
}

func newState(key, header []byte) (*state, error) {
	if len(key) != KeySize || len(header) != HeaderSize {
		return nil, errBadKey
	}
	s := &state{}
	sub, err := chacha20.HChaCha20(key, header[:16])
	if err != nil {
		return nil, err
	}
	copy(s.k[:], sub)
	copy(s.nonce[4:], header[16:])
	s.resetCounter()
	return s, s.initAEAD()
}

func (s *state) initAEAD() error {
	a, err := chacha20poly1305.New(s.k[:])
	s.aead = a
	return err
}

func (s *state) resetCounter() {
	binary.LittleEndian.PutUint32(s.nonce[:4], 1)
}

// aeadCompatible reports whether a message of mlen bytes can go through the
// IETF AEAD. Poly1305 in secretstream pads the body with mlen mod 16 zero
// bytes, the AEAD with (16 - mlen mod 16) mod 16: they agree at 0 and 8.
func aeadCompatible(mlen int) bool {
	return mlen%16 == 0 || mlen%16 == 8
}

// open authenticates and decrypts one message in place. buf holds headroom
// spare bytes followed by the wire message (tag byte, body, MAC). On success
// the plaintext is buf[64:64+mlen]. On failure nothing in buf is plaintext.
func (s *state) open(buf []byte) (tag byte, err error) {
	mlen := len(buf) - headroom - Overhead
	var ks1 [64]byte
	s.block(1, &ks1)
	buf[0] = buf[headroom]
	copy(buf[1:64], ks1[1:])
	var mac [16]byte
	copy(mac[:], buf[64+mlen:])
	msg := buf[:64+mlen+16]
	if !s.generic && aeadCompatible(mlen) {
		if _, err := s.aead.Open(msg[:0], s.nonce[:], msg, nil); err != nil {
			return 0, errs.ErrCorrupted
		}
		tag = buf[0]
	} else {
		var ks0 [64]byte
		s.block(0, &ks0)
		var sum [16]byte
		s.mac(&sum, &ks0, msg[:64+mlen])
		if subtle.ConstantTimeCompare(sum[:], mac[:]) != 1 {
			return 0, errs.ErrCorrupted
		}
		tag = buf[0] ^ ks1[0]
		s.xorBody(buf[64 : 64+mlen])
	}
	s.advance(&mac, tag)
	return tag, nil
}

// seal encrypts one message in place. buf holds 64 spare bytes, the mlen
// plaintext bytes, and 16 more bytes of room; the wire message is returned as
// buf[63:64+mlen+16].
func (s *state) seal(buf []byte, tag byte) []byte {
	mlen := len(buf) - 64 - 16
	msg := buf[:64+mlen]
	var ks1 [64]byte
	if !s.generic && aeadCompatible(mlen) {
		clear(buf[:64])
		buf[0] = tag
		s.aead.Seal(msg[:0], s.nonce[:], msg, nil)
	} else {
		var ks0 [64]byte
		s.block(0, &ks0)
		s.block(1, &ks1)
		copy(buf[:64], ks1[:])
		buf[0] ^= tag
		s.xorBody(buf[64 : 64+mlen])
		var sum [16]byte
		s.mac(&sum, &ks0, msg)
		copy(buf[64+mlen:], sum[:])
	}
	var mac [16]byte
	copy(mac[:], buf[64+mlen:])
	buf[headroom] = buf[0]
	s.advance(&mac, tag)
	return buf[headroom : 64+mlen+16]
}

// mac computes secretstream's Poly1305 over the encrypted tag block and body
// (msg), the quirky mlen-mod-16 padding and the two lengths.
func (s *state) mac(sum *[16]byte, ks0 *[64]byte, msg []byte) {
	var key [32]byte
	copy(key[:], ks0[:32])
	h := poly1305.New(&key)
	mlen := len(msg) - 64
	var pad [16 + 16]byte
	n := mlen % 16
	binary.LittleEndian.PutUint64(pad[n+8:], uint64(len(msg)))
	_, _ = h.Write(msg)
	_, _ = h.Write(pad[:n+16])
	h.Sum(sum[:0])
}

// xorBody applies the keystream from block 2 on, as secretstream does for
// message bodies.
func (s *state) xorBody(b []byte) { s.xorKeyStream(2, b) }

// block writes the keystream block at position counter into out: the
// Poly1305 key, the tag block, rekeying.
func (s *state) block(counter uint32, out *[64]byte) {
	clear(out[:])
	s.xorKeyStream(counter, out[:])
}

// xorKeyStream XORs b with the ChaCha20 (IETF, 12-byte nonce) keystream
// under the state's key and nonce, from block counter on.
func (s *state) xorKeyStream(counter uint32, b []byte) {
	c, err := chacha20.NewUnauthenticatedCipher(s.k[:], s.nonce[:])
	if err != nil {
		panic("secretstream: internal error: " + err.Error())
	}
	c.SetCounter(counter)
	c.XORKeyStream(b, b)
}

// advance moves the state past a message: the inonce absorbs the MAC, the
// counter steps, and a REKEY tag or a counter wrap rekeys.
func (s *state) advance(mac *[16]byte, tag byte) {
	for i := 0; i < 8; i++ {
		s.nonce[4+i] ^= mac[i]
	}
	c := binary.LittleEndian.Uint32(s.nonce[:4]) + 1
	binary.LittleEndian.PutUint32(s.nonce[:4], c)
	if tag&tagRekey != 0 || c == 0 {
		s.rekey()
	}
}

func (s *state) rekey() {
	var ks [64]byte
	s.block(0, &ks)
	for i := 0; i < 32; i++ {
		s.k[i] ^= ks[i]
	}
	for i := 0; i < 8; i++ {
		s.nonce[4+i] ^= ks[32+i]
	}
	s.resetCounter()
	if err := s.initAEAD(); err != nil {
		panic("secretstream: internal error: " + err.Error())
	}
}
