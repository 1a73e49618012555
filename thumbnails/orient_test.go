package thumbnails

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withOrientation is a JPEG of img carrying EXIF orientation o, in the byte
// order bo, as a phone writes it.
func withOrientation(t *testing.T, img image.Image, o uint16, bo binary.ByteOrder) []byte {
	t.Helper()
	var enc bytes.Buffer
	require.NoError(t, jpeg.Encode(&enc, img, &jpeg.Options{Quality: 95}))
	var tiff bytes.Buffer
	if bo == binary.LittleEndian {
		tiff.WriteString("II*\x00")
	} else {
		tiff.WriteString("MM\x00*")
	}
	_ = binary.Write(&tiff, bo, uint32(8))                          // IFD0 offset
	_ = binary.Write(&tiff, bo, uint16(2))                          // two entries
	for _, e := range [][3]uint16{{0x010f, 2, 0}, {0x0112, 3, o}} { // Make (ignored), Orientation
		_ = binary.Write(&tiff, bo, e[0])
		_ = binary.Write(&tiff, bo, e[1])
		_ = binary.Write(&tiff, bo, uint32(1))
		_ = binary.Write(&tiff, bo, e[2])
		_ = binary.Write(&tiff, bo, uint16(0))
	}
	_ = binary.Write(&tiff, bo, uint32(0))
	app1 := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	out := []byte{0xff, 0xd8, 0xff, 0xe1, byte((len(app1) + 2) >> 8), byte(len(app1) + 2)}
	out = append(out, app1...)
	return append(out, enc.Bytes()[2:]...)
}

// halves is w×h, red on the left half, blue on the right.
func halves(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{255, 0, 0, 255}
			if x >= w/2 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func isRed(c color.Color) bool {
	r, _, b, _ := c.RGBA()
	return r > 0xc000 && b < 0x4000
}

// A phone's portrait photo, stored sideways with orientation 6, makes an
// upright thumbnail: the stored left half ends on top.
func TestThumbnailsFollowEXIFOrientation(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, c := range []struct {
			o        uint16
			w, h     int
			redWhere image.Point // a pixel of the displayed image that is red
		}{
			{1, 80, 40, image.Pt(5, 20)},
			{3, 80, 40, image.Pt(75, 20)},
			{6, 40, 80, image.Pt(20, 5)},
			{8, 40, 80, image.Pt(20, 75)},
			{2, 80, 40, image.Pt(75, 20)},
			{5, 40, 80, image.Pt(20, 5)},
		} {
			p := filepath.Join(t.TempDir(), "photo.jpg")
			require.NoError(t, os.WriteFile(p, withOrientation(t, halves(80, 40), c.o, bo), 0o600))
			img, err := SystemTools().decodeFile(context.Background(), p, t.TempDir(), 0)
			require.NoError(t, err)
			assert.Equal(t, image.Pt(c.w, c.h), img.Bounds().Size(), "orientation %d", c.o)
			assert.True(t, isRed(img.At(c.redWhere.X, c.redWhere.Y)), "orientation %d: %v is not red", c.o, c.redWhere)
		}
	}
	assert.Equal(t, 1, jpegOrientation([]byte("not a jpeg")))
	assert.Equal(t, 1, jpegOrientation([]byte{0xff, 0xd8, 0xff, 0xe1, 0x00, 0x08, 'E', 'x', 'i', 'f'}), "a cut EXIF block")
}
