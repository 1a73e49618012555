package thumbnails

import (
	"image"
	"math"

	"golang.org/x/image/draw"
)

// Content classes: a thumbnail that decrypts and decodes but shows the
// wrong picture (--check-content).
const (
	Blank        Class = "blank"         // all one colour (black, grey, white); the original is not
	Garbled      Class = "garbled"       // noise, or bands of flat grey where the original has detail
	WrongPicture Class = "wrong-picture" // clearly unlike the original: another picture, or its tones changed
	Turned       Class = "turned"        // the right picture, turned or mirrored
)

// sigSide is the side of the grid pictures are compared on: small enough
// that size, resampling and JPEG quality do not matter, large enough to
// tell pictures apart.
const sigSide = 24

// grid is a picture reduced to sigSide² luma values (0–255), its aspect
// ratio ignored: every thumbnail of one original, whatever its size or
// encoder, reduces to nearly the same grid.
type grid [sigSide * sigSide]float64

// signature is a picture's grid and the spread of its values.
type signature struct {
	px  grid
	std float64
}

func signatureOf(img image.Image) *signature {
	g := image.NewGray(image.Rect(0, 0, sigSide, sigSide))
	// x/image's kernels average over the whole footprint when shrinking, so
	// the grid does not depend on which resampler made the thumbnail.
	draw.BiLinear.Scale(g, g.Bounds(), img, img.Bounds(), draw.Src, nil)
	s := &signature{}
	for i, v := range g.Pix {
		s.px[i] = float64(v)
	}
	_, s.std = meanStd(s.px[:])
	return s
}

func meanStd(v []float64) (float64, float64) {
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	m := sum / float64(len(v))
	for _, x := range v {
		d := x - m
		sq += d * d
	}
	return m, math.Sqrt(sq / float64(len(v)))
}

// apart is how far two grids are from each other: the root mean square of
// their differences, in levels of luma (0–255). Layout and brightness move
// it alike; hue alone does not.
func apart(a, b *grid) float64 {
	var sq float64
	for i := range a {
		d := a[i] - b[i]
		sq += d * d
	}
	return math.Sqrt(sq / float64(len(a)))
}

// transformed is grid a under EXIF orientation o (2–8): what a thumbnail
// made from the picture turned or mirrored that way reduces to.
func transformed(a *grid, o int) grid {
	var out grid
	n := sigSide
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			var sx, sy int
			switch o {
			case 2:
				sx, sy = n-1-x, y
			case 3:
				sx, sy = n-1-x, n-1-y
			case 4:
				sx, sy = x, n-1-y
			case 5:
				sx, sy = y, x
			case 6:
				sx, sy = y, n-1-x
			case 7:
				sx, sy = n-1-y, n-1-x
			case 8:
				sx, sy = n-1-y, x
			default:
				sx, sy = x, y
			}
			out[y*n+x] = a[sy*n+sx]
		}
	}
	return out
}

// roughness is how little neighbouring pixels of img agree: 1 minus the
// correlation of each pixel with the one to its right, over a grid of
// samples at the image's own resolution. Near 0 for photos at any
// thumbnail size, near 1 for noise. It also returns the spread of the
// sampled luma.
func roughness(img image.Image) (float64, float64) {
	const samples = 64
	b := img.Bounds()
	luma := func(x, y int) float64 {
		r, g, bl, _ := img.At(x, y).RGBA()
		return (299*float64(r) + 587*float64(g) + 114*float64(bl)) / 1000 / 257
	}
	var a, c []float64
	for i := 0; i < samples; i++ {
		y := b.Min.Y + i*b.Dy()/samples
		for j := 0; j < samples; j++ {
			x := b.Min.X + j*(b.Dx()-1)/samples
			a = append(a, luma(x, y))
			c = append(c, luma(x+1, y)) // outside a picture one pixel wide: black
		}
	}
	ma, sa := meanStd(a)
	mc, sc := meanStd(c)
	if sa < 1e-6 || sc < 1e-6 {
		return 0, sa // flat: nothing to correlate
	}
	var sum float64
	for i := range a {
		sum += a[i] * c[i]
	}
	return 1 - (sum/float64(len(a))-ma*mc)/(sa*sc), sa
}

// Thresholds of the comparison.
const (
	flatStd   = 3.0  // a grid this flat is one colour
	detailStd = 12.0 // an original (or a band of it) with this much contrast is not flat
	// otherApart: a thumbnail this far from its original (apart) is clearly
	// unlike it, and quak's own render is clearly closer. Measured on real
	// and synthetic photos: their thumbnails at 150–720 px, quality 30–90,
	// through four resamplers, 1.4 at most (5.5 at 96 px, nearest-neighbour,
	// quality 30); quak's render 0.3–0.8, 1.3 when squeezed into 3 KB; the
	// photo turned, 32 or more; another photo of the same layout in other
	// colours, 32; other photos, 41 or more. Any picture whose correlation
	// with a detailed original (detailStd) is below 0.7 is at least 8.6 apart.
	otherApart = 8.0
	noisyRough = 0.6 // this rough is noise (photos stay well below 0.3)
)

// judge compares a thumbnail with the original as Ente's apps display it
// (orig nil for a video, whose frame differs between Ente's clients: then
// only blank and noise are judged). It returns OK, Blank, Garbled, Turned
// or WrongPicture, and how far the thumbnail is from the original (apart;
// 0 without orig).
func judge(thumb image.Image, orig image.Image) (Class, float64) {
	t := signatureOf(thumb)
	rough, fine := roughness(thumb)
	noisy := rough > noisyRough && fine >= detailStd // a flat JPEG's faint artefacts are not noise
	if orig == nil {
		switch {
		case noisy:
			return Garbled, 0
		case t.std < flatStd:
			return Blank, 0
		}
		return OK, 0
	}
	o := signatureOf(orig)
	far := apart(&t.px, &o.px)
	origRough, _ := roughness(orig)
	switch {
	case noisy && origRough < noisyRough/2:
		return Garbled, far
	case t.std < flatStd && o.std >= detailStd:
		return Blank, far
	case flatBands(t, o):
		return Garbled, far
	case far < otherApart:
		return OK, far
	}
	for k := 2; k <= 8; k++ {
		if g := transformed(&o.px, k); apart(&t.px, &g) < otherApart {
			return Turned, far
		}
	}
	return WrongPicture, far
}

// flatBands reports a thumbnail with a quarter or more of its rows flat
// where the original has detail: the grey lower part of an image whose
// data was cut short when it was made.
func flatBands(t, o *signature) bool {
	const bands = 4
	rows := sigSide / bands
	for b := 0; b < bands; b++ {
		tb := t.px[b*rows*sigSide : (b+1)*rows*sigSide]
		ob := o.px[b*rows*sigSide : (b+1)*rows*sigSide]
		_, ts := meanStd(tb)
		_, os := meanStd(ob)
		if ts < flatStd/2 && os >= detailStd {
			return true
		}
	}
	return false
}
