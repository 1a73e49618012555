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

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
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
