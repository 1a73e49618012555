package download

import (
	"bytes"
	"errors"
	"os"
	"testing"

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
	for _, c := range []struct {
		name   string
		open   func(string) (*os.File, error)
		offset int64
	}{
		{"direct", openDirect, 0},
		{"direct, resumed at 4 MiB", openDirect, 4 << 20},
		{"no O_DIRECT", func(string) (*os.File, error) { return nil, errors.New("unsupported") }, 0},
		{"refused mid-way", func(p string) (*os.File, error) { return os.OpenFile(p, os.O_RDONLY, 0) }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			directOpen = c.open
			t.Cleanup(func() { directOpen = openDirect })
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
