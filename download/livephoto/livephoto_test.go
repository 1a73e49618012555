package livephoto

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
)

func writeZip(t *testing.T, dir string, entries map[string][]byte, mode os.FileMode) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range entries {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if mode != 0 {
			h.SetMode(mode)
		}
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, _ = w.Write(data)
	}
	require.NoError(t, zw.Close())
	p := filepath.Join(dir, "live.zip")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

func tempsIn(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range es {
		if e.Name() != "live.zip" {
			n++
		}
	}
	return n
}

func TestUnpack(t *testing.T) {
	dir := t.TempDir()
	zipped := enteapitest.LivePhoto("heic", []byte("img"), "mov", []byte("vid"))
	p := filepath.Join(dir, "live.zip")
	require.NoError(t, os.WriteFile(p, zipped, 0o600))
	img, vid, err := Unpack(p, dir, ".t-")
	require.NoError(t, err)
	assert.Equal(t, ".heic", img.Ext)
	assert.Equal(t, ".mov", vid.Ext)
	b, err := os.ReadFile(img.Path)
	require.NoError(t, err)
	assert.Equal(t, []byte("img"), b)
	h := keys.NewHash()
	h.Write([]byte("vid"))
	assert.True(t, HashMatches(keys.EncodeB64(h.Sum(nil)), vid.Hash))
}

func TestUnpackRefusesHostileArchives(t *testing.T) {
	cases := map[string]struct {
		entries map[string][]byte
		mode    os.FileMode
	}{
		"path":       {map[string][]byte{"../image.jpg": []byte("i"), "video.mov": []byte("v")}, 0},
		"subdir":     {map[string][]byte{"x/image.jpg": []byte("i"), "video.mov": []byte("v")}, 0},
		"backslash":  {map[string][]byte{`..\image.jpg`: []byte("i"), "video.mov": []byte("v")}, 0},
		"symlink":    {map[string][]byte{"image.jpg": []byte("/etc/passwd"), "video.mov": []byte("v")}, os.ModeSymlink | 0o777},
		"three":      {map[string][]byte{"image.jpg": []byte("i"), "video.mov": []byte("v"), "extra": []byte("x")}, 0},
		"one":        {map[string][]byte{"image.jpg": []byte("i")}, 0},
		"two images": {map[string][]byte{"image.jpg": []byte("i"), "image2.jpg": []byte("v")}, 0},
		"unknown":    {map[string][]byte{"image.jpg": []byte("i"), "other.mov": []byte("v")}, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, _, err := Unpack(writeZip(t, dir, tc.entries, tc.mode), dir, ".t-")
			assert.ErrorIs(t, err, ErrBadArchive)
			assert.Zero(t, tempsIn(t, dir), "temp parts left behind")
		})
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "live.zip")
	require.NoError(t, os.WriteFile(p, []byte("not a zip"), 0o600))
	_, _, err := Unpack(p, dir, ".t-")
	assert.ErrorIs(t, err, ErrBadArchive)
}

// A zip whose entry holds more than it declares is refused, not trusted.
func TestUnpackRefusesSizesBeyondTheDeclared(t *testing.T) {
	dir := t.TempDir()
	zipped := enteapitest.LivePhoto("jpg", bytes.Repeat([]byte("i"), 1000), "mov", []byte("v"))
	// Lower the declared size of the first entry in both headers.
	idx := bytes.Index(zipped, []byte("image.jpg"))
	require.Positive(t, idx)
	patched := bytes.Clone(zipped)
	for _, sig := range [][]byte{{'P', 'K', 3, 4}, {'P', 'K', 1, 2}} {
		for off := 0; ; {
			i := bytes.Index(patched[off:], sig)
			if i < 0 {
				break
			}
			h := off + i
			nameOff := map[byte]int{3: 30, 1: 46}[sig[2]]
			sizeOff := map[byte]int{3: 22, 1: 24}[sig[2]]
			if bytes.HasPrefix(patched[h+nameOff:], []byte("image.jpg")) {
				patched[h+sizeOff], patched[h+sizeOff+1] = 10, 0 // declare 10 bytes
			}
			off = h + 4
		}
	}
	p := filepath.Join(dir, "live.zip")
	require.NoError(t, os.WriteFile(p, patched, 0o600))
	_, _, err := Unpack(p, dir, ".t-")
	assert.ErrorIs(t, err, ErrBadArchive)
	assert.Zero(t, tempsIn(t, dir))
}
