package secretstream

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/secretstream/sodiumtest"
)

// encryptAll reads the whole EncryptReader of pt read through wrap.
func encryptAll(t *testing.T, key, header, pt []byte, chunk int, wrap func(io.Reader) io.Reader) []byte {
	t.Helper()
	r, err := newEncryptReader(key, header, wrap(bytes.NewReader(pt)), chunk)
	require.NoError(t, err)
	ct, err := io.ReadAll(r)
	require.NoError(t, err)
	return ct
}

func same(r io.Reader) io.Reader { return r }

// The encryptor's output under a vector's key and header is libsodium's
// ciphertext, byte for byte (or by SHA-256 for the long streams).
func TestEncryptReaderMatchesLibsodium(t *testing.T) {
	for _, v := range sodiumtest.Load(t).Secretstream {
		t.Run(fmt.Sprintf("len=%d,chunk=%d", v.PlaintextLen, v.ChunkSize), func(t *testing.T) {
			pt := sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
			ct := encryptAll(t, v.Key, v.Header, pt, v.ChunkSize, same)
			require.Len(t, ct, v.CiphertextLen)
			if sum := sha256.Sum256(ct); !bytes.Equal(sum[:], v.CiphertextSHA256) {
				t.Fatalf("ciphertext SHA-256 %x, libsodium's %x", sum, v.CiphertextSHA256)
			}
			if v.Ciphertext != nil {
				equalBytes(t, ct, v.Ciphertext)
			}
		})
	}
}

func TestEncryptReaderAtEnteChunkSizeMatchesLibsodium(t *testing.T) {
	for _, v := range sodiumtest.Load(t).Secretstream {
		if v.ChunkSize != ChunkSize {
			continue
		}
		r, err := NewEncryptReader(v.Key, v.Header, bytes.NewReader(sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)))
		require.NoError(t, err)
		h := sha256.New()
		n, err := io.Copy(h, r)
		require.NoError(t, err)
		assert.Equal(t, int64(v.CiphertextLen), n, "len=%d", v.PlaintextLen)
		assert.Equal(t, CiphertextSize(int64(v.PlaintextLen)), n, "len=%d", v.PlaintextLen)
		if !bytes.Equal(h.Sum(nil), v.CiphertextSHA256) {
			t.Fatalf("len=%d: NewEncryptReader differs from libsodium", v.PlaintextLen)
		}
	}
}

// Sources that return a byte at a time, half of what is asked or EOF with
// the last data change nothing; the reader obeys io.Reader's contract.
func TestEncryptReaderWithAwkwardSources(t *testing.T) {
	for _, v := range sodiumtest.Load(t).Secretstream {
		if v.Ciphertext == nil {
			continue
		}
		pt := sodiumtest.Pattern(v.PlaintextLen, v.PlaintextSeed)
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"onebyte": iotest.OneByteReader,
			"half":    iotest.HalfReader,
			"dataerr": iotest.DataErrReader,
		} {
			t.Run(fmt.Sprintf("len=%d,chunk=%d,src=%s", v.PlaintextLen, v.ChunkSize, name), func(t *testing.T) {
				equalBytes(t, encryptAll(t, v.Key, v.Header, pt, v.ChunkSize, wrap), v.Ciphertext)
				r, err := newEncryptReader(v.Key, v.Header, wrap(bytes.NewReader(pt)), v.ChunkSize)
				require.NoError(t, err)
				if err := iotest.TestReader(r, v.Ciphertext); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestEncryptReaderRoundTripsAcrossChunkEdges(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	header := bytes.Repeat([]byte{2}, HeaderSize)
	const chunk = 16
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 160} {
		t.Run(fmt.Sprintf("len=%d", n), func(t *testing.T) {
			pt := sodiumtest.Pattern(n, 3)
			ct := encryptAll(t, key, header, pt, chunk, same)
			wantChunks := max((n+chunk-1)/chunk, 1)
			require.Len(t, ct, n+wantChunks*Overhead, "a multiple of the chunk size ends with a full FINAL chunk, no empty one")
			r, err := newReader(key, header, bytes.NewReader(ct), int64(len(ct)), chunk)
			require.NoError(t, err)
			defer r.Release()
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			equalBytes(t, got, pt)
			old, err := encrypt(key, header, pt, chunk)
			require.NoError(t, err)
			equalBytes(t, ct, old)
		})
	}
}

func TestEncryptReaderOfNothingIsOneEmptyFinalMessage(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	header := bytes.Repeat([]byte{2}, HeaderSize)
	r, err := NewEncryptReader(key, header, bytes.NewReader(nil))
	require.NoError(t, err)
	ct, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Len(t, ct, Overhead)
	got, err := OpenBlob(key, header, ct)
	require.NoError(t, err)
	assert.Empty(t, got)
	n, err := r.Read(make([]byte, 10))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF, "EOF stays")
}

// errAfter yields data and then fails with err instead of ending.
type errAfter struct {
	data []byte
	err  error
}

func (e *errAfter) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// A failing source fails the stream: the chunk it broke is never sealed
// (a FINAL tag on it would make a short file look whole), and the error
// is wrapped and sticky.
func TestEncryptReaderSourceErrors(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	header := bytes.Repeat([]byte{2}, HeaderSize)
	boom := errors.New("disk gone")
	for _, n := range []int{0, 5, 16, 32} {
		t.Run(fmt.Sprintf("after=%d", n), func(t *testing.T) {
			r, err := newEncryptReader(key, header, &errAfter{data: sodiumtest.Pattern(n, 1), err: boom}, 16)
			require.NoError(t, err)
			ct, err := io.ReadAll(r)
			require.ErrorIs(t, err, boom)
			assert.Len(t, ct, max(n-1, 0)/16*(16+Overhead), "only the chunks read whole and followed by more are sealed")
			_, again := r.Read(make([]byte, 1))
			assert.Equal(t, err, again, "errors are sticky")
			if len(ct) > 0 {
				_, derr := io.ReadAll(mustReader(t, key, header, ct, 16))
				assert.Error(t, derr, "what came out has no FINAL chunk")
			}
		})
	}
}

func mustReader(t *testing.T, key, header, ct []byte, chunk int) *Reader {
	t.Helper()
	r, err := newReader(key, header, bytes.NewReader(ct), int64(len(ct)), chunk)
	require.NoError(t, err)
	t.Cleanup(r.Release)
	return r
}

func TestEncryptReaderNeedsAChunkSize(t *testing.T) {
	assert.Panics(t, func() {
		_, _ = newEncryptReader(make([]byte, KeySize), make([]byte, HeaderSize), bytes.NewReader(nil), 0)
	})
}

func TestEncryptReaderRefusesBadKeys(t *testing.T) {
	_, err := NewEncryptReader(make([]byte, 31), make([]byte, HeaderSize), bytes.NewReader(nil))
	assert.Error(t, err)
	_, err = NewEncryptReader(make([]byte, KeySize), make([]byte, 23), bytes.NewReader(nil))
	assert.Error(t, err)
}

// A short stream keeps a small buffer; a long one grows it to one chunk and
// no more.
func TestEncryptReaderBufferFollowsTheStream(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	header := bytes.Repeat([]byte{2}, HeaderSize)
	r, err := NewEncryptReader(key, header, bytes.NewReader(make([]byte, 1000)))
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(r.buf), 64+smallestBuf+16)

	r, err = NewEncryptReader(key, header, bytes.NewReader(make([]byte, smallestBuf+1)))
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, 64+2*smallestBuf+16, len(r.buf), "it doubles as the data comes")

	r, err = NewEncryptReader(key, header, bytes.NewReader(make([]byte, 2*ChunkSize+5)))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.NoError(t, err)
	assert.Equal(t, 64+ChunkSize+16, len(r.buf))
}

// A checkpoint taken while encrypting, or rebuilt by Replay from its public
// fields, resumes the stream: the rest of the ciphertext is the same bytes.
func TestEncryptReaderResumesFromACheckpoint(t *testing.T) {
	key := bytes.Repeat([]byte{4}, KeySize)
	header := bytes.Repeat([]byte{5}, HeaderSize)
	const chunk = 16
	pt := sodiumtest.Pattern(100, 9)
	whole := encryptAll(t, key, header, pt, chunk, same)

	r, err := newEncryptReader(key, header, bytes.NewReader(pt), chunk)
	require.NoError(t, err)
	_, ok := r.Checkpoint()
	assert.False(t, ok, "no checkpoint before a chunk")
	head := make([]byte, 2*(chunk+Overhead)+5)
	_, err = io.ReadFull(r, head)
	require.NoError(t, err)
	cp, ok := r.Checkpoint()
	require.True(t, ok)
	assert.Equal(t, 2, cp.Chunks, "the third chunk is not handed out whole yet")
	assert.Equal(t, int64(2*(chunk+Overhead)), cp.Offset)

	for name, cp := range map[string]Checkpoint{"taken": cp, "replayed": replayed(t, key, header, cp)} {
		t.Run(name, func(t *testing.T) {
			rr, err := resumeEncrypt(cp, bytes.NewReader(pt[cp.Chunks*chunk:]), chunk)
			require.NoError(t, err)
			rest, err := io.ReadAll(rr)
			require.NoError(t, err)
			equalBytes(t, rest, whole[cp.Offset:])
		})
	}
	_, err = ResumeEncrypt(Checkpoint{}, bytes.NewReader(nil))
	assert.Error(t, err, "the zero checkpoint")

	// From the first chunk on.
	r, err = newEncryptReader(key, header, bytes.NewReader(pt), chunk)
	require.NoError(t, err)
	_, err = io.ReadFull(r, make([]byte, chunk+Overhead))
	require.NoError(t, err)
	first, ok := r.Checkpoint()
	require.True(t, ok)
	require.Equal(t, 1, first.Chunks)
	rr, err := resumeEncrypt(first, bytes.NewReader(pt[chunk:]), chunk)
	require.NoError(t, err)
	rest, err := io.ReadAll(rr)
	require.NoError(t, err)
	equalBytes(t, rest, whole[first.Offset:])
}

func replayed(t *testing.T, key, header []byte, cp Checkpoint) Checkpoint {
	t.Helper()
	pub := Checkpoint{Offset: cp.Offset, Chunks: cp.Chunks, MACXor: cp.MACXor}
	out, err := Replay(key, header, pub)
	require.NoError(t, err)
	return out
}

// The FINAL chunk makes no checkpoint: a finished stream is never resumed.
func TestEncryptReaderFinalChunkMakesNoCheckpoint(t *testing.T) {
	key := bytes.Repeat([]byte{4}, KeySize)
	header := bytes.Repeat([]byte{5}, HeaderSize)
	r, err := newEncryptReader(key, header, bytes.NewReader(make([]byte, 40)), 16)
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.NoError(t, err)
	cp, ok := r.Checkpoint()
	require.True(t, ok)
	assert.Equal(t, 2, cp.Chunks)
}

func TestEncryptBlobOpens(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	rnd := bytes.NewReader(bytes.Repeat([]byte{9}, HeaderSize))
	ct, header, err := EncryptBlob(rnd, key, []byte(`{"title":"a.jpg"}`))
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{9}, HeaderSize), header, "the header comes from the random source")
	got, err := OpenBlob(key, header, ct)
	require.NoError(t, err)
	assert.Equal(t, `{"title":"a.jpg"}`, string(got))

	_, _, err = EncryptBlob(bytes.NewReader(nil), key, nil)
	assert.Error(t, err, "an exhausted random source")
}
