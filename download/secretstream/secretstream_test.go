package secretstream

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/secretstream/sodiumtest"
	"github.com/quak-photos/quak/errs"
)

// equalBytes reports the first differing offset instead of a megabyte diff.
func equalBytes(t *testing.T, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	n := min(len(got), len(want))
	for i := 0; i < n; i++ {
		if got[i] != want[i] {
			t.Fatalf("bytes differ at offset %d (len got %d, want %d)", i, len(got), len(want))
		}
	}
	t.Fatalf("length differs: got %d, want %d", len(got), len(want))
}

func decryptAll(t *testing.T, v sodiumtest.Secretstream, src io.Reader, size int64) ([]byte, error) {
	t.Helper()
	r, err := newReader(v.Key, v.Header, src, size, v.ChunkSize)
	require.NoError(t, err)
	defer r.Release() // the next stream decrypts in this one's buffer
	return io.ReadAll(r)
}

// vectorCiphertext returns the vector's ciphertext: the stored bytes when
// present, else quak's encryption once its SHA-256 matched libsodium's.
func vectorCiphertext(t *testing.T, v sodiumtest.Secretstream) []byte {
	t.Helper()
	pt := sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
	ct, err := encrypt(v.Key, v.Header, pt, v.ChunkSize)
	require.NoError(t, err)
	if len(ct) != v.CiphertextLen {
		t.Fatalf("ciphertext length %d, libsodium's %d", len(ct), v.CiphertextLen)
	}
	if sum := sha256.Sum256(ct); !bytes.Equal(sum[:], v.CiphertextSHA256) {
		t.Fatalf("ciphertext SHA-256 %x, libsodium's %x", sum, v.CiphertextSHA256)
	}
	if v.Ciphertext != nil {
		equalBytes(t, ct, v.Ciphertext)
		return v.Ciphertext
	}
	return ct
}

func TestVectors(t *testing.T) {
	vs := sodiumtest.Load(t)
	for _, v := range vs.Secretstream {
		t.Run(fmt.Sprintf("len=%d,chunk=%d", v.PlaintextLen, v.ChunkSize), func(t *testing.T) {
			ct := vectorCiphertext(t, v)
			want := sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
			got, err := decryptAll(t, v, bytes.NewReader(ct), int64(len(ct)))
			require.NoError(t, err)
			equalBytes(t, got, want)
			got, err = decryptAll(t, v, bytes.NewReader(ct), -1)
			require.NoError(t, err)
			equalBytes(t, got, want)
		})
	}
}

func TestVectorsWithAwkwardSources(t *testing.T) {
	vs := sodiumtest.Load(t)
	for _, v := range vs.Secretstream {
		if v.Ciphertext == nil {
			continue // the long streams are covered above; byte-at-a-time is slow under -race
		}
		want := sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
		sources := map[string]func(io.Reader) io.Reader{
			"onebyte":  iotest.OneByteReader,
			"half":     iotest.HalfReader,
			"dataerr":  iotest.DataErrReader,
			"timeout0": func(r io.Reader) io.Reader { return r },
		}
		for name, wrap := range sources {
			t.Run(fmt.Sprintf("len=%d,chunk=%d,src=%s", v.PlaintextLen, v.ChunkSize, name), func(t *testing.T) {
				r, err := newReader(v.Key, v.Header, wrap(bytes.NewReader(v.Ciphertext)), -1, v.ChunkSize)
				require.NoError(t, err)
				if err := iotest.TestReader(r, want); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestEnteChunkSizeIsDefault(t *testing.T) {
	vs := sodiumtest.Load(t)
	for _, v := range vs.Secretstream {
		if v.ChunkSize != ChunkSize {
			continue
		}
		pt := sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
		ct, err := Encrypt(v.Key, v.Header, pt)
		require.NoError(t, err)
		if sum := sha256.Sum256(ct); !bytes.Equal(sum[:], v.CiphertextSHA256) {
			t.Fatalf("len=%d: Encrypt differs from libsodium", v.PlaintextLen)
		}
		if CiphertextSize(int64(len(pt))) != int64(v.CiphertextLen) {
			t.Fatalf("CiphertextSize(%d) = %d, libsodium wrote %d", len(pt), CiphertextSize(int64(len(pt))), v.CiphertextLen)
		}
		r, err := NewReader(v.Key, v.Header, bytes.NewReader(ct), int64(len(ct)))
		require.NoError(t, err)
		var out bytes.Buffer
		n, err := r.WriteTo(&out)
		require.NoError(t, err)
		require.Equal(t, int64(len(pt)), n)
		equalBytes(t, out.Bytes(), pt)
	}
}

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

func TestSourceErrorIsWrapped(t *testing.T) {
	v, _ := multi(t)
	boom := errors.New("connection reset")
	src := io.MultiReader(bytes.NewReader(v.Ciphertext[:40]), iotest.ErrReader(boom))
	_, err := readUntilError(t, v, v.Key, v.Header, v.Ciphertext, -1)
	require.NoError(t, err)
	r, err := newReader(v.Key, v.Header, src, -1, v.ChunkSize)
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.ErrorIs(t, err, boom)
}

func TestBadKeyOrHeaderLength(t *testing.T) {
	_, err := NewReader(make([]byte, 31), make([]byte, 24), nil, -1)
	require.Error(t, err)
	_, err = NewWriter(io.Discard, make([]byte, 32), make([]byte, 23))
	require.Error(t, err)
}

func TestRoundTripAcrossChunkEdges(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	header := bytes.Repeat([]byte{2}, HeaderSize)
	// 16 and 24 take the AEAD fast path, 33 the generic one.
	for _, chunk := range []int{16, 24, 33} {
		for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk, 3*chunk + 5} {
			for _, step := range []int{1, 7, chunk, 1000} {
				t.Run(fmt.Sprintf("chunk=%d,len=%d,step=%d", chunk, n, step), func(t *testing.T) {
					pt := sodiumtest.Pattern(n, chunk)
					var ct bytes.Buffer
					w, err := newWriter(&ct, key, header, chunk)
					require.NoError(t, err)
					for p := pt; len(p) > 0; {
						k := min(step, len(p))
						_, err := w.Write(p[:k])
						require.NoError(t, err)
						p = p[k:]
					}
					require.NoError(t, w.Close())
					wantChunks := max((n+chunk-1)/chunk, 1)
					require.Equal(t, n+wantChunks*Overhead, ct.Len())
					r, err := newReader(key, header, &ct, int64(ct.Len()), chunk)
					require.NoError(t, err)
					got, err := io.ReadAll(iotest.OneByteReader(r))
					require.NoError(t, err)
					equalBytes(t, got, pt)
				})
			}
		}
	}
}

func TestBlob(t *testing.T) {
	vs := sodiumtest.Load(t)
	for _, v := range vs.Secretstream {
		if v.ChunkSize != ChunkSize || v.Ciphertext == nil {
			continue
		}
		// Every single-message vector is a blob.
		pt, err := OpenBlob(v.Key, v.Header, v.Ciphertext)
		require.NoError(t, err)
		equalBytes(t, pt, sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed))
		ct, err := SealBlob(v.Key, v.Header, pt)
		require.NoError(t, err)
		equalBytes(t, ct, v.Ciphertext)
		if len(v.Ciphertext) > Overhead {
			_, err = OpenBlob(v.Key, v.Header, v.Ciphertext[:len(v.Ciphertext)-1])
			require.Error(t, err)
			_, err = OpenBlob(v.Key, v.Header, flip(v.Ciphertext, 0))
			requireCorrupted(t, err)
		}
	}
	// A blob made of two messages is not a blob.
	v, _ := multi(t)
	_, err := OpenBlob(v.Key, v.Header, v.Ciphertext)
	require.Error(t, err)
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	for _, chunk := range []int{4096, 4096 + 8} {
		key := bytes.Repeat([]byte{3}, KeySize)
		header := bytes.Repeat([]byte{4}, HeaderSize)
		ct, err := encrypt(key, header, make([]byte, 300*chunk), chunk)
		require.NoError(t, err)
		r, err := newReader(key, header, bytes.NewReader(ct), int64(len(ct)), chunk)
		require.NoError(t, err)
		buf := make([]byte, chunk)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := io.ReadFull(r, buf); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Fatalf("chunk=%d: %v allocations per chunk, want 0", chunk, allocs)
		}
	}
}

func TestChachaBlockMatchesXCrypto(t *testing.T) {
	// The block function is checked end to end by the vectors; this pins it
	// directly against golang.org/x/crypto/chacha20 at a few counters.
	var key [32]byte
	var nonce [12]byte
	for i := range key {
		key[i] = byte(i)
	}
	for i := range nonce {
		nonce[i] = byte(100 + i)
	}
	for _, ctr := range []uint32{0, 1, 2, 0xffffffff} {
		var got [64]byte
		chachaBlock(&key, &nonce, ctr, &got)
		want := xcryptoBlock(t, key[:], nonce[:], ctr)
		equalBytes(t, got[:], want)
	}
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

// A stream cut anywhere resumes from its last checkpoint to the exact
// plaintext, on libsodium's own vectors; a resumed stream still catches a
// flipped byte and a missing FINAL chunk.
func TestResumeFromACheckpoint(t *testing.T) {
	v, pt := multi(t)
	ct := vectorCiphertext(t, v)
	wire := v.ChunkSize + Overhead
	for cut := 1; cut < len(ct); cut += 7 {
		r, err := newReader(v.Key, v.Header, bytes.NewReader(ct[:cut]), int64(len(ct)), v.ChunkSize)
		require.NoError(t, err)
		var got bytes.Buffer
		_, err = r.WriteTo(&got)
		require.Error(t, err, "cut at %d", cut)
		cp, ok := r.Checkpoint()
		if cut < wire {
			require.False(t, ok, "no whole chunk before %d", cut)
			continue
		}
		require.True(t, ok)
		require.Equal(t, int64(cp.Chunks*wire), cp.Offset)
		require.LessOrEqual(t, cp.Offset, int64(cut))
		require.Equal(t, pt[:cp.Chunks*v.ChunkSize], got.Bytes()[:cp.Chunks*v.ChunkSize])
		rest, err := Resume(cp, bytes.NewReader(ct[cp.Offset:]), int64(len(ct)))
		require.NoError(t, err)
		rest.chunk = wire
		tail, err := io.ReadAll(rest)
		require.NoError(t, err, "cut at %d", cut)
		require.Equal(t, pt[cp.Chunks*v.ChunkSize:], tail)

		bad := bytes.Clone(ct[cp.Offset:])
		bad[len(bad)/2] ^= 1
		rest, err = Resume(cp, bytes.NewReader(bad), int64(len(ct)))
		require.NoError(t, err)
		rest.chunk = wire
		_, err = io.ReadAll(rest)
		require.ErrorIs(t, err, errs.ErrCorrupted, "a flipped byte after a resume")
	}
}

// Replay rebuilds, from the key, the header and the public fields, the very
// state a reader reached: a later run can take a download up.
func TestReplayRebuildsTheCheckpoint(t *testing.T) {
	for _, v := range sodiumtest.Load(t).Secretstream {
		ct := vectorCiphertext(t, v)
		r, err := newReader(v.Key, v.Header, bytes.NewReader(ct), int64(len(ct)), v.ChunkSize)
		require.NoError(t, err)
		var cps []Checkpoint
		r.OnCheckpoint = func(cp Checkpoint) { cps = append(cps, cp) }
		_, err = io.Copy(io.Discard, r)
		require.NoError(t, err)
		wantCheckpoints := (v.PlaintextLen - 1) / v.ChunkSize // every chunk but the FINAL one
		if v.PlaintextLen == 0 {
			wantCheckpoints = 0
		}
		require.Len(t, cps, wantCheckpoints, "len %d chunk %d", v.PlaintextLen, v.ChunkSize)
		for _, cp := range cps {
			public := Checkpoint{Offset: cp.Offset, Chunks: cp.Chunks, MACXor: cp.MACXor}
			got, err := Replay(v.Key, v.Header, public)
			require.NoError(t, err)
			require.Equal(t, cp, got, "chunk %d", cp.Chunks)
		}
	}
	_, err := Replay(make([]byte, 32), make([]byte, 24), Checkpoint{})
	require.Error(t, err, "no chunk, no checkpoint")
}
