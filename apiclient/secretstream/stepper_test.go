package secretstream

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/errs"
)

// stream is a 3-chunk Ente stream (the last one short) and the
// checkpoints a Reader makes in it, after chunks 1 and 2.
func stream(t *testing.T) (key, header, plain, wire []byte, cps []Checkpoint) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	key, header = make([]byte, KeySize), make([]byte, HeaderSize)
	plain = make([]byte, 2*ChunkSize+1000)
	for _, b := range [][]byte{key, header, plain} {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	wire, err := Encrypt(key, header, plain)
	require.NoError(t, err)
	r, err := NewReader(key, header, bytes.NewReader(wire), int64(len(wire)))
	require.NoError(t, err)
	defer r.Release()
	r.OnCheckpoint = func(cp Checkpoint) { cps = append(cps, cp) }
	var out bytes.Buffer
	_, err = r.WriteTo(&out)
	require.NoError(t, err)
	require.Len(t, cps, 2)
	return key, header, plain, wire, cps
}

// A Stepper reaches the Reader's checkpoints: by opening the next chunk's
// ciphertext, or by sealing its plaintext again.
func TestAStepperReachesTheReadersCheckpoints(t *testing.T) {
	key, header, plain, wire, cps := stream(t)
	s := NewStepper()
	defer s.Release()
	w := int64(ChunkSize + Overhead)
	copy(s.Wire(), wire[w:2*w])
	got, next, err := s.Open(cps[0], int(w))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(plain[ChunkSize:2*ChunkSize], got))
	assert.Equal(t, cps[1], next)

	copy(s.Plain(), plain[ChunkSize:2*ChunkSize])
	next, err = s.Reseal(cps[0], ChunkSize)
	require.NoError(t, err)
	assert.Equal(t, cps[1], next)

	// From a checkpoint rebuilt by a later run, too.
	re, err := Replay(key, header, Checkpoint{Offset: cps[0].Offset, Chunks: 1, MACXor: cps[0].MACXor})
	require.NoError(t, err)
	copy(s.Plain(), plain[ChunkSize:2*ChunkSize])
	next, err = s.Reseal(re, ChunkSize)
	require.NoError(t, err)
	assert.Equal(t, cps[1].MACXor, next.MACXor)
}

// What is not the next chunk gets no checkpoint: another chunk, a changed
// byte, a chunk cut short, the FINAL chunk; plaintext with a changed byte
// seals to another MACXor.
func TestAStepperTakesNothingButTheNextChunk(t *testing.T) {
	_, _, plain, wire, cps := stream(t)
	s := NewStepper()
	defer s.Release()
	w := int64(ChunkSize + Overhead)
	for name, c := range map[string]struct {
		cp    Checkpoint
		bytes []byte
	}{
		"the chunk before": {cps[0], wire[:w]},
		"a changed byte":   {cps[0], append(append([]byte{}, wire[w:w+100]...), append([]byte{wire[w+100] ^ 1}, wire[w+101:2*w]...)...)},
		"cut short":        {cps[0], wire[w : 2*w-1]},
		"the FINAL chunk":  {cps[1], wire[2*w:]},
		"no bytes at all":  {cps[0], wire[w : w+Overhead]},
	} {
		n := copy(s.Wire(), c.bytes)
		_, next, err := s.Open(c.cp, n)
		assert.True(t, errors.Is(err, errs.ErrCorrupted), "%s: %v", name, err)
		assert.Equal(t, c.cp, next, name)
	}
	copy(s.Plain(), plain[ChunkSize:2*ChunkSize])
	s.Plain()[7] ^= 1
	next, err := s.Reseal(cps[0], ChunkSize)
	require.NoError(t, err)
	assert.NotEqual(t, cps[1].MACXor, next.MACXor)
	_, err = s.Reseal(cps[0], ChunkSize+1)
	assert.Error(t, err)
	_, err = s.Reseal(cps[0], 0)
	assert.Error(t, err)
}

// Start is where a Reader begins: the first chunk opens from it to the
// Reader's first checkpoint.
func TestStartIsBeforeTheFirstChunk(t *testing.T) {
	key, header, plain, wire, cps := stream(t)
	start, err := Start(key, header)
	require.NoError(t, err)
	assert.Zero(t, start.Chunks)
	assert.Zero(t, start.Offset)
	s := NewStepper()
	defer s.Release()
	w := ChunkSize + Overhead
	copy(s.Wire(), wire[:w])
	got, next, err := s.Open(start, w)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(plain[:ChunkSize], got))
	assert.Equal(t, cps[0], next)
	_, err = Start(key[:31], header)
	assert.Error(t, err)
}
