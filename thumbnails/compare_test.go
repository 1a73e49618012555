package thumbnails

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
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
	b := img.Bounds()
	w, h := side, max(1, b.Dy()*side/b.Dx())
	if b.Dy() > b.Dx() {
		w, h = max(1, b.Dx()*side/b.Dy()), side
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	k.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, dst, &jpeg.Options{Quality: q}))
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
				for _, q := range []int{30, 50, 70, 90} {
					class, n := judge(thumbOf(t, orig, side, k, q), orig)
					assert.Equal(t, OK, class, "%s at %d px, %s, quality %d (ncc %.2f)", name, side, kn, q, n)
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
			class, n := judge(c.thumb, orig)
			assert.Equal(t, c.want, class, "%s: %s (ncc %.2f)", name, what, n)
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

// The same scene drawn again (another scale or crop: the pattern no longer
// lines up, its colours stay) is not called another picture: only a
// picture whose colours differ too is.
func TestSameColoursAreNotAnotherPicture(t *testing.T) {
	orig := checks(800, 600, 90, 0)
	redrawn := checks(720, 540, 70, 31)
	class, same := judge(redrawn, orig)
	require.Less(t, same, otherNCC, "the patterns do not line up")
	assert.Equal(t, OK, class)
	class, _ = judge(thumbOf(t, photo(720, 540, 1), 720, draw.BiLinear, 70), orig)
	assert.Equal(t, WrongPicture, class)
}
