package thumbnails

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"
)

// encodedAt is the JPEG Fit would make at longer side side and quality q
// of a source whose 720 px version is base.
func encodedAt(t *testing.T, base image.Image, side, q int) []byte {
	t.Helper()
	img := base
	if side != MaxSide {
		img = scale(base, side)
	}
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: q}))
	return b.Bytes()
}

// Like Ente's web app, quality steps 70, 60, 50 at 720 px; below 50 the
// thumbnail shrinks (640, 576, 512 …) at quality 50 or better before the
// quality drops, and only at the 256 px floor does it go to 40 and 30.
func TestFitShrinksBeforeGoingBelowQuality50(t *testing.T) {
	src := photo(960, 720, 3)
	base := scale(src, MaxSide)
	size := func(side, q int) int64 { return encryptedSize(len(encodedAt(t, base, side, q))) }

	out, err := Fit(src, size(720, 70))
	require.NoError(t, err)
	assert.Equal(t, encodedAt(t, base, 720, 70), out, "quality 70 fits: taken as is")

	out, err = Fit(src, size(720, 50))
	require.NoError(t, err)
	assert.Equal(t, encodedAt(t, base, 720, 50), out, "quality 50 at 720 px before any shrinking")

	out, err = Fit(src, size(720, 50)-1)
	require.NoError(t, err)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, 640, cfg.Width, "the next size down, not quality 40 at 720 px")
	var q int
	for _, c := range []int{70, 60, 50} {
		if bytes.Equal(out, encodedAt(t, base, 640, c)) {
			q = c
		}
	}
	assert.GreaterOrEqual(t, q, 50, "made at quality 50 or better")

	out, err = Fit(src, size(256, 50)-1)
	require.NoError(t, err)
	assert.Equal(t, encodedAt(t, base, 256, 40), out, "at the floor, quality 40")

	_, err = Fit(src, size(256, 30)-1)
	require.ErrorIs(t, err, ErrTooLarge, "nothing below 256 px at quality 30")
}

// An image smaller than 720 px is never enlarged; it starts at its own size.
func TestFitKeepsASmallImagesSize(t *testing.T) {
	out, err := Fit(photo(300, 200, 1), 1<<20)
	require.NoError(t, err)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, [2]int{300, 200}, [2]int{cfg.Width, cfg.Height})
	_, err = Fit(photo(240, 180, 1), 400)
	require.ErrorIs(t, err, ErrTooLarge)
}

// A square original is scaled to 720×720 like any other over 720 px, and
// one of 720 px or less keeps its size; a tall one has its height scaled.
func TestFitScalesEveryShapeTo720(t *testing.T) {
	for _, c := range []struct{ w, h, wantW, wantH int }{
		{1000, 1000, 720, 720},
		{721, 721, 720, 720},
		{720, 720, 720, 720},
		{719, 719, 719, 719},
		{600, 900, 480, 720},
		{721, 722, 719, 720},
		{722, 721, 720, 719},
	} {
		out, err := Fit(flat(c.w, c.h, color.Gray{Y: 90}), 1<<20)
		require.NoError(t, err)
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
		require.NoError(t, err)
		assert.Equal(t, [2]int{c.wantW, c.wantH}, [2]int{cfg.Width, cfg.Height}, "%d×%d", c.w, c.h)
	}
}

// A strip one pixel high or wide is scaled along its length, not cut:
// both of its halves are in the thumbnail.
func TestFitScalesAStripNotCutsIt(t *testing.T) {
	wide := halves(2000, 1)
	tall := image.NewRGBA(image.Rect(0, 0, 1, 2000))
	draw.Draw(tall, image.Rect(0, 0, 1, 1000), image.NewUniform(color.RGBA{255, 0, 0, 255}), image.Point{}, draw.Src)
	draw.Draw(tall, image.Rect(0, 1000, 1, 2000), image.NewUniform(color.RGBA{0, 0, 255, 255}), image.Point{}, draw.Src)
	for name, c := range map[string]struct {
		img        image.Image
		size, last image.Point
	}{
		"wide": {wide, image.Pt(720, 1), image.Pt(719, 0)},
		"tall": {tall, image.Pt(1, 720), image.Pt(0, 719)},
	} {
		out, err := Fit(c.img, 1<<20)
		require.NoError(t, err)
		dec, err := jpeg.Decode(bytes.NewReader(out))
		require.NoError(t, err)
		assert.Equal(t, c.size, dec.Bounds().Size(), name)
		assert.True(t, isRed(dec.At(0, 0)), "%s: starts red", name)
		r, _, b, _ := dec.At(c.last.X, c.last.Y).RGBA()
		assert.Greater(t, b, r, "%s: ends blue", name)
	}
}

// A picture of one pixel is a picture: it gets a thumbnail.
func TestFitTakesAOnePixelImage(t *testing.T) {
	out, err := Fit(flat(1, 1, color.White), 1<<20)
	require.NoError(t, err)
	assert.True(t, IsImage(out))
}

// Transparency is flattened on black, as Ente's web app does.
func TestTransparentImageOnBlack(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 100, 50))
	out, err := Fit(img, 1<<20)
	require.NoError(t, err)
	dec, err := jpeg.Decode(bytes.NewReader(out))
	require.NoError(t, err)
	r, g, b, _ := dec.At(50, 25).RGBA()
	assert.Less(t, r>>8+g>>8+b>>8, uint32(3*16))
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

// An HDR video (PQ or HLG transfer, as ffprobe reports it) has its frame
// tone-mapped as Ente's apps do; an SDR one does not; an ffmpeg that cannot
// tone-map still gives the plain frame.
func TestHDRVideoFrameIsToneMapped(t *testing.T) {
	frame := pngOf(t, photo(64, 36, 2))
	for _, c := range []struct {
		transfer   string
		toneFails  bool
		wantFilter []bool // per ffmpeg call: was the tone map asked for
	}{
		{"smpte2084", false, []bool{true}},
		{"arib-std-b67", false, []bool{true}},
		{"bt709", false, []bool{false}},
		{"smpte2084", true, []bool{true, true, false}},
	} {
		var filters []bool
		tools := Tools{
			LookPath: func(name string) (string, error) { return "/bin/" + name, nil },
			Run: func(_ context.Context, path string, args ...string) ([]byte, error) {
				if path == "/bin/ffprobe" {
					return []byte(c.transfer + "\n"), nil
				}
				tm := false
				for _, a := range args {
					tm = tm || a == hdrToSDR
				}
				filters = append(filters, tm)
				if tm && c.toneFails {
					return []byte("No such filter: 'zscale'"), fmt.Errorf("exit status 1")
				}
				return nil, os.WriteFile(args[len(args)-1], frame, 0o600)
			},
		}
		src := filepath.Join(t.TempDir(), "clip.mp4")
		require.NoError(t, os.WriteFile(src, []byte("video"), 0o600))
		img, err := tools.decodeFile(context.Background(), src, t.TempDir(), 1)
		require.NoError(t, err, c.transfer)
		assert.Equal(t, 64, img.Bounds().Dx())
		assert.Equal(t, c.wantFilter, filters, "%s, tone map fails: %v", c.transfer, c.toneFails)
	}
}
