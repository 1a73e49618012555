package secretstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
	"github.com/quak-photos/quak/errs"
)

// multi is the 7-chunk libsodium stream (100 bytes in chunks of 16): six full
// chunks of 33 wire bytes and a FINAL chunk of 21.
func multi(t *testing.T) (sodiumtest.Secretstream, []byte) {
	t.Helper()
	for _, v := range sodiumtest.Load(t).Secretstream {
		if v.ChunkSize == 16 && v.PlaintextLen == 100 {
			return v, sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
		}
	}
	t.Fatal("no 100-byte, 16-byte-chunk vector")
	return sodiumtest.Secretstream{}, nil
}

// readUntilError reads everything and returns what was released and the error.
func readUntilError(t *testing.T, v sodiumtest.Secretstream, key, header, ct []byte, size int64) ([]byte, error) {
	t.Helper()
	r, err := newReader(key, header, bytes.NewReader(ct), size, v.ChunkSize)
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	if err != nil {
		// Errors are sticky.
		_, again := r.Read(make([]byte, 1))
		require.Equal(t, err, again)
	}
	return out, err
}

func requireTruncated(t *testing.T, err error, reason errs.TruncReason) {
	t.Helper()
	var te *errs.TruncatedStreamError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want *errs.TruncatedStreamError", err, err)
	}
	if te.Reason != reason {
		t.Fatalf("reason %v, want %v", te.Reason, reason)
	}
}

func TestTruncatedAtEveryChunkBoundary(t *testing.T) {
	v, pt := multi(t)
	wire := v.ChunkSize + Overhead
	for cut := 0; cut < len(v.Ciphertext); cut += wire {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			out, err := readUntilError(t, v, v.Key, v.Header, v.Ciphertext[:cut], -1)
			requireTruncated(t, err, errs.NoFinal)
			var te *errs.TruncatedStreamError
			require.ErrorAs(t, err, &te)
			require.Equal(t, cut/wire, te.Chunks)
			require.Equal(t, int64(cut), te.Got)
			equalBytes(t, out, pt[:cut/wire*v.ChunkSize])
		})
	}
}

func TestTruncatedMidChunk(t *testing.T) {
	v, pt := multi(t)
	wire := v.ChunkSize + Overhead
	for cut := 1; cut < len(v.Ciphertext); cut++ {
		if cut%wire == 0 {
			continue
		}
		for _, size := range []int64{-1, int64(len(v.Ciphertext))} {
			t.Run(fmt.Sprintf("cut=%d,size=%d", cut, size), func(t *testing.T) {
				out, err := readUntilError(t, v, v.Key, v.Header, v.Ciphertext[:cut], size)
				requireTruncated(t, err, errs.PartialChunk)
				equalBytes(t, out, pt[:cut/wire*v.ChunkSize])
			})
		}
	}
}

func TestEmptyObjectIsTruncated(t *testing.T) {
	v, _ := multi(t)
	_, err := readUntilError(t, v, v.Key, v.Header, nil, 0)
	requireTruncated(t, err, errs.NoFinal)
}

func TestEmptyPlaintextIsOneFinalChunk(t *testing.T) {
	vs := sodiumtest.Load(t)
	for _, v := range vs.Secretstream {
		if v.PlaintextLen != 0 {
			continue
		}
		require.Len(t, v.Ciphertext, Overhead)
		got, err := decryptAll(t, v, bytes.NewReader(v.Ciphertext), Overhead)
		require.NoError(t, err)
		require.Empty(t, got)
		ct, err := Encrypt(v.Key, v.Header, nil)
		require.NoError(t, err)
		equalBytes(t, ct, v.Ciphertext)
		return
	}
	t.Fatal("no empty-plaintext vector")
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}

func requireCorrupted(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, errs.ErrCorrupted) {
		t.Fatalf("error %v (%T), want errs.ErrCorrupted", err, err)
	}
}

func TestFlippedBitInEveryRegion(t *testing.T) {
	v, pt := multi(t)
	wire := v.ChunkSize + Overhead
	size := int64(len(v.Ciphertext))
	t.Run("header", func(t *testing.T) {
		for i := range v.Header {
			out, err := readUntilError(t, v, v.Key, flip(v.Header, i), v.Ciphertext, size)
			requireCorrupted(t, err)
			require.Empty(t, out)
		}
	})
	for chunk := 0; chunk*wire < len(v.Ciphertext); chunk++ {
		start := chunk * wire
		end := min(start+wire, len(v.Ciphertext))
		regions := map[string]int{"tag": start, "body": start + 1, "mac": end - 1}
		for name, off := range regions {
			t.Run(fmt.Sprintf("chunk=%d,%s", chunk, name), func(t *testing.T) {
				out, err := readUntilError(t, v, v.Key, v.Header, flip(v.Ciphertext, off), size)
				requireCorrupted(t, err)
				equalBytes(t, out, pt[:chunk*v.ChunkSize])
			})
		}
	}
}

// TestFlippedLastChunkWithoutSize pins the documented ambiguity: without the
// expected size, a damaged short last chunk cannot be told from a cut one.
func TestFlippedLastChunkWithoutSize(t *testing.T) {
	v, _ := multi(t)
	_, err := readUntilError(t, v, v.Key, v.Header, flip(v.Ciphertext, len(v.Ciphertext)-1), -1)
	requireTruncated(t, err, errs.PartialChunk)
}

func TestSwappedChunks(t *testing.T) {
	v, _ := multi(t)
	wire := v.ChunkSize + Overhead
	ct := bytes.Clone(v.Ciphertext)
	copy(ct[0:wire], v.Ciphertext[wire:2*wire])
	copy(ct[wire:2*wire], v.Ciphertext[0:wire])
	out, err := readUntilError(t, v, v.Key, v.Header, ct, int64(len(ct)))
	requireCorrupted(t, err)
	require.Empty(t, out)
}

func TestTrailingGarbage(t *testing.T) {
	v, pt := multi(t)
	for _, extra := range [][]byte{{0}, []byte("garbage"), bytes.Repeat([]byte{7}, 100)} {
		ct := append(bytes.Clone(v.Ciphertext), extra...)
		out, err := readUntilError(t, v, v.Key, v.Header, ct, int64(len(v.Ciphertext)))
		requireTruncated(t, err, errs.TrailingData)
		// Everything before the last chunk was released; the last, not yet.
		equalBytes(t, out, pt[:6*v.ChunkSize])

		// Without the size, garbage after a short FINAL chunk moves the
		// chunk boundary; it must still fail, never succeed.
		_, err = readUntilError(t, v, v.Key, v.Header, ct, -1)
		require.Error(t, err)
	}
}

func TestTwoFinalChunks(t *testing.T) {
	vs := sodiumtest.Load(t)
	for _, v := range vs.Secretstream {
		if v.PlaintextLen != 4096 {
			continue
		}
		// A whole stream of one full FINAL chunk, then the same chunk again.
		v.ChunkSize = v.PlaintextLen
		ct := append(bytes.Clone(v.Ciphertext), v.Ciphertext...)
		_, err := readUntilError(t, v, v.Key, v.Header, ct, -1)
		requireTruncated(t, err, errs.TrailingData)
		return
	}
	t.Fatal("no 4096-byte vector")
}

func TestWrongKey(t *testing.T) {
	v, _ := multi(t)
	key := flip(v.Key, 0)
	out, err := readUntilError(t, v, key, v.Header, v.Ciphertext, -1)
	requireCorrupted(t, err)
	require.Empty(t, out)
}

// A stream that authenticates to its end but is shorter than the size the
// server announced is refused: the size is part of what is checked.
func TestFinalChunkShortOfTheAnnouncedSize(t *testing.T) {
	v, _ := multi(t)
	ct := vectorCiphertext(t, v)
	_, err := readUntilError(t, v, v.Key, v.Header, ct, int64(len(ct))+4096)
	requireTruncated(t, err, errs.ShortOfSize)
	_, err = readUntilError(t, v, v.Key, v.Header, ct, int64(len(ct)))
	require.NoError(t, err, "at the announced size it reads")
}
