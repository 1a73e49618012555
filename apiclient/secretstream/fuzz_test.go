package secretstream

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
	"github.com/quak-photos/quak/errs"
)

// fuzzVectors are the libsodium streams short enough to hold as seeds.
func fuzzVectors(f *testing.F) []sodiumtest.Secretstream {
	f.Helper()
	var vs []sodiumtest.Secretstream
	for _, v := range sodiumtest.Load(f).Secretstream {
		if v.Ciphertext != nil && len(v.Ciphertext) <= 4200 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		f.Fatal("no secretstream vectors to seed the fuzzer")
	}
	return vs
}

// FuzzDecrypt feeds arbitrary bytes, as ciphertext under a vector's key,
// header and chunk size, to the Reader: it never panics, fails only with
// quak's error types, and succeeds only on a stream that authenticated to its
// FINAL chunk, which re-encrypts to exactly the input.
func FuzzDecrypt(f *testing.F) {
	vs := fuzzVectors(f)
	for i, v := range vs {
		f.Add(uint8(i), []byte(v.Ciphertext), false)
		f.Add(uint8(i), []byte(v.Ciphertext[:len(v.Ciphertext)/2]), true)
	}
	f.Fuzz(func(t *testing.T, which uint8, ct []byte, knownSize bool) {
		v := vs[int(which)%len(vs)]
		size := int64(-1)
		if knownSize {
			size = int64(len(ct))
		}
		r, err := newReader(v.Key, v.Header, bytes.NewReader(ct), size, v.ChunkSize)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := io.ReadAll(r)
		if err != nil {
			var te *errs.TruncatedStreamError
			if !errors.As(err, &te) && !errors.Is(err, errs.ErrCorrupted) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		again, err := encrypt(v.Key, v.Header, pt, v.ChunkSize)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, ct) {
			t.Fatalf("accepted a stream (%d bytes) that is not the encryption of its plaintext", len(ct))
		}
	})
}

// FuzzRoundTrip encrypts arbitrary plaintext at an arbitrary chunk size and
// decrypts it back.
func FuzzRoundTrip(f *testing.F) {
	for _, v := range fuzzVectors(f) {
		f.Add(sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed), uint16(v.ChunkSize%4096))
	}
	key := bytes.Repeat([]byte{9}, KeySize)
	header := bytes.Repeat([]byte{8}, HeaderSize)
	f.Fuzz(func(t *testing.T, pt []byte, chunk uint16) {
		c := int(chunk)%512 + 1
		ct, err := encrypt(key, header, pt, c)
		if err != nil {
			t.Fatal(err)
		}
		r, err := newReader(key, header, bytes.NewReader(ct), int64(len(ct)), c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("round trip of %d bytes at chunk %d: %v", len(pt), c, err)
		}
		if !bytes.Equal(got, pt) {
			t.Fatalf("round trip of %d bytes at chunk %d changed the data", len(pt), c)
		}
	})
}

// FuzzEncryptReader encrypts arbitrary plaintext through the EncryptReader
// at an arbitrary chunk size, read in arbitrary steps, and decrypts it back
// with the Reader; the ciphertext is also the Writer's, byte for byte.
func FuzzEncryptReader(f *testing.F) {
	for _, v := range fuzzVectors(f) {
		f.Add(sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed), uint16(v.ChunkSize%4096), uint16(7))
	}
	key := bytes.Repeat([]byte{3}, KeySize)
	header := bytes.Repeat([]byte{4}, HeaderSize)
	f.Fuzz(func(t *testing.T, pt []byte, chunk, step uint16) {
		c := int(chunk)%512 + 1
		r, err := newEncryptReader(key, header, bytes.NewReader(pt), c)
		if err != nil {
			t.Fatal(err)
		}
		var ct []byte
		buf := make([]byte, int(step)%700+1)
		for {
			n, err := r.Read(buf)
			ct = append(ct, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		want, err := encrypt(key, header, pt, c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ct, want) {
			t.Fatalf("%d bytes at chunk %d: the EncryptReader and the Writer differ", len(pt), c)
		}
		d, err := newReader(key, header, bytes.NewReader(ct), int64(len(ct)), c)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Release()
		got, err := io.ReadAll(d)
		if err != nil {
			t.Fatalf("round trip of %d bytes at chunk %d: %v", len(pt), c, err)
		}
		if !bytes.Equal(got, pt) {
			t.Fatalf("round trip of %d bytes at chunk %d changed the data", len(pt), c)
		}
	})
}
