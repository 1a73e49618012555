package thumbnails

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func jpegSize(t *testing.T, img image.Image, q int) int64 {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: q}))
	return encryptedSize(b.Len())
}

// Quality steps down first, keeping 720 px; only when quality 30 does not
// fit does the size shrink.
func TestFitStepsQualityThenSize(t *testing.T) {
	src := photo(960, 720, 3)
	at720 := scale(src, MaxSide)
	q70, q50, q30 := jpegSize(t, at720, 70), jpegSize(t, at720, 50), jpegSize(t, at720, 30)
	require.Less(t, q30, q50)
	require.Less(t, q50, q70)

	out, err := Fit(src, q70)
	require.NoError(t, err)
	assert.Equal(t, q70, encryptedSize(len(out)), "quality 70 fits: taken as is")

	out, err = Fit(src, q50)
	require.NoError(t, err)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, 720, cfg.Width, "a lower quality fits before a smaller size is tried")
	assert.LessOrEqual(t, encryptedSize(len(out)), q50)
	assert.Greater(t, encryptedSize(len(out)), q30, "the highest quality that fits, not the lowest")

	out, err = Fit(src, q30-1)
	require.NoError(t, err)
	cfg, err = jpeg.DecodeConfig(bytes.NewReader(out))
	require.NoError(t, err)
	assert.Less(t, cfg.Width, 720, "below quality 30 the size shrinks")
	assert.LessOrEqual(t, encryptedSize(len(out)), q30-1)
}

func TestFitGivesUpBelowTheSmallestThumbnail(t *testing.T) {
	_, err := Fit(photo(240, 180, 1), 400)
	require.ErrorIs(t, err, ErrTooLarge)
	// The smallest size quak makes still fits a generous budget.
	out, err := Fit(photo(240, 180, 1), 4000)
	require.NoError(t, err)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, max(cfg.Width, cfg.Height), minSide)
}

// Transparency is flattened on white, not black.
func TestTransparentImageOnWhite(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 100, 50))
	out, err := Fit(img, 1<<20)
	require.NoError(t, err)
	dec, err := jpeg.Decode(bytes.NewReader(out))
	require.NoError(t, err)
	r, g, b, _ := dec.At(50, 25).RGBA()
	assert.Greater(t, r>>8+g>>8+b>>8, uint32(3*240))
}

// pngHeader is the start of a PNG claiming w×h pixels: enough for
// DecodeConfig, which is all the pixel cap may need.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk := append([]byte("IHDR"), ihdr...)
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	b.Write(chunk)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func TestDecodeRefusesTooManyPixels(t *testing.T) {
	_, err := Decode(bytes.NewReader(pngHeader(20000, 5001)))
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "over quak's limit")
	// Just under the cap is not refused for its size (it then fails as a
	// truncated PNG, not as too large).
	_, err = Decode(bytes.NewReader(pngHeader(20000, 5000)))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "over quak's limit")
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head     string
		fileType int
		want     sourceKind
	}{
		{"\xff\xd8\xff\xe0", 0, kindGo},
		{"\x89PNG\r\n\x1a\n", 0, kindGo},
		{"GIF89a", 0, kindGo},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", 0, kindGo},
		{"\x00\x00\x00\x18ftypheic", 0, kindHEIF},
		{"\x00\x00\x00\x18ftypmif1", 0, kindHEIF},
		{"\x00\x00\x00\x18ftypisom", 0, kindVideo},
		{"anything", 1, kindVideo},
	} {
		got, err := sniff([]byte(c.head), c.fileType)
		require.NoError(t, err, "%q", c.head)
		assert.Equal(t, c.want, got, "%q", c.head)
	}
	_, err := sniff([]byte("%PDF-1.7"), 0)
	assert.ErrorIs(t, err, ErrUnsupported)
}

// A thumbnail whose header reads but whose body is cut is not an image.
func TestIsImageDecodesTheWholeImage(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, photo(64, 48, 1), nil))
	assert.True(t, IsImage(b.Bytes()))
	assert.False(t, IsImage(b.Bytes()[:b.Len()/2]))
	assert.False(t, IsImage([]byte("not an image")))
}
