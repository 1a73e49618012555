package thumbnails

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"
)

// originals are real photos (frames of real video, testdata/README.md),
// an illustration and a synthetic photo.
func originals(t *testing.T) map[string]image.Image {
	t.Helper()
	out := map[string]image.Image{"synthetic": photo(960, 720, 3)}
	for _, name := range []string{"video-001.jpeg", "video-005.gray.jpeg", "go-turns-two-280x360.jpeg"} {
		f, err := os.Open(filepath.Join("testdata", name))
		require.NoError(t, err)
		img, err := Decode(f)
		_ = f.Close()
		require.NoError(t, err)
		out[name] = img
	}
	return out
}

// thumbOf is img with its longer side side px, resampled by k and encoded
// as JPEG at quality q, decoded again: a thumbnail as some app made it.
func thumbOf(t *testing.T, img image.Image, side int, k draw.Interpolator, q int) image.Image {
	t.Helper()
	return jpegAt(t, scaledBy(img, side, k), q)
}

// scaledBy is img with its longer side side px, resampled by k.
func scaledBy(img image.Image, side int, k draw.Interpolator) image.Image {
	b := img.Bounds()
	w, h := side, max(1, b.Dy()*side/b.Dx())
	if b.Dy() > b.Dx() {
		w, h = max(1, b.Dx()*side/b.Dy()), side
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	k.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// jpegAt is img encoded as JPEG at quality q and decoded again.
func jpegAt(t *testing.T, img image.Image, q int) image.Image {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}))
	out, err := jpeg.Decode(&buf)
	require.NoError(t, err)
	return out
}

var kernels = map[string]draw.Interpolator{"nearest": draw.NearestNeighbor, "approx-bilinear": draw.ApproxBiLinear,
	"bilinear": draw.BiLinear, "catmull-rom": draw.CatmullRom}

// A healthy thumbnail, at any size, quality and resampling Ente's apps
// use (and more), is never flagged.
func TestHealthyThumbnailsAreNeverFlagged(t *testing.T) {
	for name, orig := range originals(t) {
		longer := max(orig.Bounds().Dx(), orig.Bounds().Dy())
		for _, side := range []int{720, 512, 256, 96} {
			side = min(side, longer)
			for kn, k := range kernels {
				scaled := scaledBy(orig, side, k)
				for _, q := range []int{30, 50, 70, 90} {
					class, far := judge(jpegAt(t, scaled, q), orig)
					assert.Equal(t, OK, class, "%s at %d px, %s, quality %d (%.1f apart)", name, side, kn, q, far)
				}
			}
		}
	}
}

func flat(w, h int, c color.Color) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	return img
}

func noise(w, h int, seed int64) image.Image {
	rng := rand.New(rand.NewSource(seed))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	_, _ = rng.Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

// greyBelow is img with everything below fraction f of its height grey:
// what a JPEG cut short while the thumbnail was made decodes to.
func greyBelow(img image.Image, f float64) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(b)
	draw.Draw(out, b, img, b.Min, draw.Src)
	y0 := b.Min.Y + int(float64(b.Dy())*f)
	draw.Draw(out, image.Rect(b.Min.X, y0, b.Max.X, b.Max.Y), image.NewUniform(color.Gray{128}), image.Point{}, draw.Src)
	return out
}

func TestBrokenThumbnailsAreFound(t *testing.T) {
	origs := originals(t)
	for name, orig := range origs {
		b := orig.Bounds()
		good := thumbOf(t, orig, min(512, max(b.Dx(), b.Dy())), draw.CatmullRom, 70)
		gb := good.Bounds()
		cases := map[string]struct {
			thumb image.Image
			want  Class
		}{
			"black":       {flat(gb.Dx(), gb.Dy(), color.Black), Blank},
			"grey":        {flat(gb.Dx(), gb.Dy(), color.Gray{128}), Blank},
			"white":       {flat(gb.Dx(), gb.Dy(), color.White), Blank},
			"noise":       {noise(gb.Dx(), gb.Dy(), 1), Garbled},
			"half grey":   {greyBelow(good, 0.5), Garbled},
			"turned 90":   {orient(good, 6), Turned},
			"upside down": {orient(good, 3), Turned},
			"mirrored":    {orient(good, 2), Turned},
			"turned 270":  {orient(good, 8), Turned},
		}
		for other, o := range origs {
			if other != name {
				cases["swapped with "+other] = struct {
					thumb image.Image
					want  Class
				}{thumbOf(t, o, 512, draw.CatmullRom, 70), WrongPicture}
			}
		}
		for what, c := range cases {
			class, far := judge(c.thumb, orig)
			assert.Equal(t, c.want, class, "%s: %s (%.1f apart)", name, what, far)
		}
	}
}

// For a video only blank and noise are judged, without the original.
func TestVideoThumbnailsOnlyBlankOrNoise(t *testing.T) {
	for name, orig := range originals(t) {
		class, _ := judge(thumbOf(t, orig, 256, draw.BiLinear, 50), nil)
		assert.Equal(t, OK, class, name)
	}
	class, _ := judge(flat(320, 180, color.Black), nil)
	assert.Equal(t, Blank, class)
	class, _ = judge(noise(320, 180, 2), nil)
	assert.Equal(t, Garbled, class)
}

// checks is w×h of red and green squares of side cell, shifted by off.
func checks(w, h, cell, off int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{220, 30, 40, 255}
			if ((x+off)/cell+(y+off)/cell)%2 == 0 {
				c = color.RGBA{30, 200, 60, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// The same scene drawn again another way (its colours the same, its
// pattern at another scale and offset) is not what Ente's apps make of the
// original, which they only scale: it is another picture.
func TestTheSameColoursRedrawnAreAnotherPicture(t *testing.T) {
	class, far := judge(checks(720, 540, 70, 31), checks(800, 600, 90, 0))
	assert.Equal(t, WrongPicture, class, "%.1f apart", far)
}

// discScene is a w×h photo of a bright disc (centre cx, cy and radius r, as
// fractions of the width and height) on a gradient from top to bottom, with
// a little texture.
func discScene(w, h int, top, bottom, disc color.RGBA, cx, cy, r float64) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	mix := func(a, b uint8, f float64, n int) uint8 {
		return uint8(min(255, max(0, int(float64(a)*(1-f)+float64(b)*f)+n)))
	}
	for y := 0; y < h; y++ {
		f := float64(y) / float64(h-1)
		for x := 0; x < w; x++ {
			n := (x*7+y*13)%23 - 11
			c := color.RGBA{mix(top.R, bottom.R, f, n), mix(top.G, bottom.G, f, n), mix(top.B, bottom.B, f, n), 255}
			dx, dy := float64(x)-cx*float64(w), float64(y)-cy*float64(h)
			if dx*dx+dy*dy < r*r*float64(h*h) {
				c = disc
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// lumaApart16 is the mean luma difference of a and b on a 16×16 grid, 0–255:
// the measure the issue was reported in.
func lumaApart16(a, b image.Image) float64 {
	grid := func(img image.Image) *image.Gray {
		g := image.NewGray(image.Rect(0, 0, 16, 16))
		draw.BiLinear.Scale(g, g.Bounds(), img, img.Bounds(), draw.Src, nil)
		return g
	}
	ga, gb := grid(a), grid(b)
	var sum float64
	for i := range ga.Pix {
		sum += math.Abs(float64(ga.Pix[i]) - float64(gb.Pix[i]))
	}
	return sum / float64(len(ga.Pix))
}

// Regression ("a thumbnail of another photo is left alone"): a thumbnail of
// another photo with the same layout, a bright disc top-left on a gradient
// in other colours, 27 levels of luma apart on a 16×16 grid where a true
// downscale is 0.5, is another picture. True downscales of the original,
// through every resampler, size and quality, are not.
func TestAnotherPhotoOfTheSameLayoutIsFound(t *testing.T) {
	sun := color.RGBA{255, 250, 220, 255}
	orig := discScene(960, 720, color.RGBA{40, 90, 200, 255}, color.RGBA{230, 150, 60, 255}, sun, 0.25, 0.25, 0.12)
	other := discScene(720, 540, color.RGBA{12, 48, 32, 255}, color.RGBA{183, 152, 153, 255}, sun, 0.27, 0.24, 0.11)
	wrong := thumbOf(t, other, 720, draw.BiLinear, 70)
	require.InDelta(t, 27, lumaApart16(wrong, orig), 1, "the case as reported")
	require.Less(t, lumaApart16(thumbOf(t, orig, 720, draw.BiLinear, 70), orig), 0.6, "a true downscale, as reported")

	class, apart := judge(wrong, orig)
	assert.Equal(t, WrongPicture, class, "%.1f apart", apart)
	for _, side := range []int{720, 512} {
		for kn, k := range kernels {
			scaled := scaledBy(orig, side, k)
			for _, q := range []int{30, 50, 70} {
				class, apart := judge(jpegAt(t, scaled, q), orig)
				assert.Equal(t, OK, class, "%d px, %s, quality %d: %.1f apart", side, kn, q, apart)
			}
		}
	}
}
