package download

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The direct writer puts every byte where ordinary writes would, from any
// aligned offset, in pieces of any size, with O_DIRECT or without it.
func TestDirectWriterWritesExactly(t *testing.T) {
	data := make([]byte, 2*(4<<20)+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	real := directOpen
	for _, c := range []struct {
		name   string
		open   func(string) (directFile, error)
		offset int64
	}{
		{"direct", real, 0},
		{"direct, resumed at 4 MiB", real, 4 << 20},
		{"no O_DIRECT", func(string) (directFile, error) { return nil, errors.New("unsupported") }, 0},
		{"refused mid-way", func(p string) (directFile, error) { return os.OpenFile(p, os.O_RDONLY, 0) }, 0},
		// A file system that opens with O_DIRECT but refuses the writes.
		{"writes refused with EINVAL", func(string) (directFile, error) { return einvalWriter{}, nil }, 0},
		{"writes refused with EINVAL, resumed at 4 MiB", func(string) (directFile, error) { return einvalWriter{}, nil }, 4 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			directOpen = c.open
			t.Cleanup(func() { directOpen = real })
			tmp, err := os.CreateTemp(t.TempDir(), "x")
			require.NoError(t, err)
			defer func() { _ = tmp.Close() }()
			require.NoError(t, tmp.Truncate(c.offset))
			_, err = tmp.WriteAt(data[:c.offset], 0)
			require.NoError(t, err)
			w := newDirectWriter(tmp, c.offset)
			if w == nil {
				_, err = tmp.Seek(c.offset, 0)
				require.NoError(t, err)
				_, err = tmp.Write(data[c.offset:])
				require.NoError(t, err)
			} else {
				rest := data[c.offset:]
				var werr error
				for len(rest) > 0 && werr == nil {
					n := min(len(rest), 1+len(rest)%777777)
					_, werr = w.Write(rest[:n])
					rest = rest[n:]
				}
				if werr == nil {
					werr = w.finish()
				}
				if c.name == "refused mid-way" {
					assert.Error(t, werr, "a descriptor that cannot write: the error reaches the caller")
					return
				}
				require.NoError(t, werr)
			}
			got, err := os.ReadFile(tmp.Name())
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data, got), "content differs")
			pos, err := tmp.Seek(0, 1)
			require.NoError(t, err)
			assert.Equal(t, int64(len(data)), pos, "the temp file's offset is at its end")
		})
	}
	assert.Nil(t, newDirectWriter(&os.File{}, 100), "an unaligned offset is never written directly")
}

// einvalWriter is an O_DIRECT descriptor whose every write is refused as
// invalid, as some file systems do.
type einvalWriter struct{}

func (einvalWriter) WriteAt([]byte, int64) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "x", Err: errInvalid}
}
func (einvalWriter) Close() error { return nil }

// A whole chunk decrypted in its aligned buffer goes out as it is: the
// writer makes no buffer of its own for it, only for a tail that is not
// whole blocks.
func TestDirectWriterWritesAlignedChunksAsTheyAre(t *testing.T) {
	tmp, err := os.CreateTemp(t.TempDir(), "x")
	require.NoError(t, err)
	defer func() { _ = tmp.Close() }()
	w := newDirectWriter(tmp, 0)
	if w == nil {
		t.Skip("no O_DIRECT on this file system")
	}
	raw := make([]byte, 2*(4<<20)+directBlock)
	skip := (directBlock - int(uintptr(unsafe.Pointer(&raw[0]))%directBlock)) % directBlock
	chunk := raw[skip : skip+4<<20]
	for i := range chunk {
		chunk[i] = byte(i * 3)
	}
	_, err = w.Write(chunk)
	require.NoError(t, err)
	assert.Nil(t, w.buf, "an aligned chunk is written from where it is")
	_, err = w.Write(chunk[:1000])
	require.NoError(t, err)
	assert.NotNil(t, w.buf, "a tail is gathered")
	require.NoError(t, w.finish())
	got, err := os.ReadFile(tmp.Name())
	require.NoError(t, err)
	assert.True(t, bytes.Equal(append(append([]byte{}, chunk...), chunk[:1000]...), got))
}
