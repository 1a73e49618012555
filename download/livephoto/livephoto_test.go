package livephoto

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
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
	res, err := Unpack(p, dir)
	require.NoError(t, err)
	img, vid := res.Image, res.Video
	assert.Empty(t, res.Anomalies)
	assert.Equal(t, ".heic", img.Ext)
	assert.Equal(t, ".mov", vid.Ext)
	b, err := os.ReadFile(img.Path)
	require.NoError(t, err)
	assert.Equal(t, []byte("img"), b)
	h := keys.NewHash()
	h.Write([]byte("vid"))
	assert.True(t, HashMatches(keys.EncodeB64(h.Sum(nil)), vid.Hash))
}

// Hostile or odd entries are left out and reported; the parts that are
// there and safe are kept.
func TestUnpackKeepsTheSafePartsOfOddArchives(t *testing.T) {
	cases := map[string]struct {
		entries    map[string][]byte
		mode       os.FileMode
		img, vid   bool
		anomalyHas string
	}{
		"path":            {map[string][]byte{"../image.jpg": []byte("i"), "video.mov": []byte("v")}, 0, false, true, "../image.jpg"},
		"image with path": {map[string][]byte{"image/../../evil.jpg": []byte("i"), "video.mov": []byte("v")}, 0, false, true, "has a path"},
		"video with path": {map[string][]byte{"image.jpg": []byte("i"), `video\..\x.mov`: []byte("v")}, 0, true, false, "has a path"},
		"absolute":        {map[string][]byte{"image.jpg": []byte("i"), "/video.mov": []byte("v")}, 0, true, false, "/video.mov"},
		"symlink":         {map[string][]byte{"image.jpg": []byte("/etc/passwd"), "video.mov": []byte("v")}, os.ModeSymlink | 0o777, false, false, ""},
		"three":           {map[string][]byte{"image.jpg": []byte("i"), "video.mov": []byte("v"), "../../x": []byte("x")}, 0, true, true, "../../x"},
		"no video":        {map[string][]byte{"image.jpg": []byte("i")}, 0, true, false, "no usable video"},
		"no image":        {map[string][]byte{"video.mov": []byte("v")}, 0, false, true, "no usable image"},
		"two images":      {map[string][]byte{"image.jpg": []byte("i"), "image2.jpg": []byte("v")}, 0, true, false, "neither its image nor its video"},
		"unknown":         {map[string][]byte{"image.jpg": []byte("i"), "other.mov": []byte("v")}, 0, true, false, "other.mov"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Unpack(writeZip(t, dir, tc.entries, tc.mode), dir)
			if !tc.img && !tc.vid {
				assert.ErrorIs(t, err, ErrBadArchive)
				assert.Zero(t, tempsIn(t, dir), "temp parts left behind")
				return
			}
			require.NoError(t, err)
			defer res.Remove()
			assert.Equal(t, tc.img, res.Image != nil, "image kept")
			assert.Equal(t, tc.vid, res.Video != nil, "video kept")
			assert.Contains(t, strings.Join(res.Anomalies, "\n"), tc.anomalyHas)
			kept := 0
			for _, p := range []*Part{res.Image, res.Video} {
				if p != nil {
					kept++
					assert.Equal(t, dir, filepath.Dir(p.Path), "parts stay in dir")
				}
			}
			assert.Equal(t, kept, tempsIn(t, dir), "only the kept parts were written")
		})
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "live.zip")
	require.NoError(t, os.WriteFile(p, []byte("not a zip"), 0o600))
	_, err := Unpack(p, dir)
	assert.ErrorIs(t, err, ErrBadArchive)
}

// The per-part cap is the only zip-bomb limit: a part declaring more is
// never extracted.
func TestUnpackRefusesPartsOverTheCap(t *testing.T) {
	assert.Equal(t, uint64(10<<30), MaxPart, "the documented cap")
	old := MaxPart
	MaxPart = 100
	t.Cleanup(func() { MaxPart = old })
	dir := t.TempDir()
	res, err := Unpack(writeZip(t, dir, map[string][]byte{"image.jpg": bytes.Repeat([]byte("i"), 101), "video.mov": []byte("v")}, 0), dir)
	require.NoError(t, err)
	defer res.Remove()
	assert.Nil(t, res.Image, "a part over the cap was extracted")
	assert.Contains(t, strings.Join(res.Anomalies, " "), "declares 101 bytes")
	assert.Equal(t, 1, tempsIn(t, dir))
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
	res, err := Unpack(p, dir)
	require.NoError(t, err, "the video is still good")
	defer res.Remove()
	assert.Nil(t, res.Image, "a part holding more than it declares is left out")
	assert.Contains(t, strings.Join(res.Anomalies, " "), `entry "image.jpg"`)
	assert.Equal(t, 1, tempsIn(t, dir))
}
