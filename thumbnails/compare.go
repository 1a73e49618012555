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
	WrongPicture Class = "wrong-picture" // another picture altogether
	Turned       Class = "turned"        // the right picture, turned or mirrored
)

// sigSide is the side of the grid pictures are compared on: small enough
// that size, resampling and JPEG quality do not matter, large enough to
// tell pictures apart.
const sigSide = 24

// signature is a picture reduced to a sigSide² grid of luma (0–255), its
// aspect ratio kept aside: every thumbnail of one original, whatever its
// size or encoder, reduces to nearly the same grid.
type signature struct {
	px     [sigSide * sigSide]float64
	aspect float64 // width / height
	mean   float64
	std    float64
}

func signatureOf(img image.Image) *signature {
	b := img.Bounds()
	g := image.NewGray(image.Rect(0, 0, sigSide, sigSide))
	// x/image's kernels average over the whole footprint when shrinking, so
	// the grid does not depend on which resampler made the thumbnail.
	draw.BiLinear.Scale(g, g.Bounds(), img, b, draw.Src, nil)
	s := &signature{aspect: float64(b.Dx()) / float64(max(b.Dy(), 1))}
	for i, v := range g.Pix {
		s.px[i] = float64(v)
	}
	s.mean, s.std = meanStd(s.px[:])
	return s
}

func meanStd(v []float64) (float64, float64) {
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	m := sum / float64(len(v))
	for _, x := range v {
		sq += (x - m) * (x - m)
	}
	return m, math.Sqrt(sq / float64(len(v)))
}

// ncc is the normalised cross-correlation of two grids, -1 to 1; 0 when
// either is flat.
func ncc(a, b *[sigSide * sigSide]float64) float64 {
	ma, sa := meanStd(a[:])
	mb, sb := meanStd(b[:])
	if sa < 1e-6 || sb < 1e-6 {
		return 0
	}
	var sum float64
	for i := range a {
		sum += (a[i] - ma) * (b[i] - mb)
	}
	return sum / (float64(len(a)) * sa * sb)
}

// transformed is grid a under EXIF orientation o (2–8): what a thumbnail
// made from the picture turned or mirrored that way reduces to.
func transformed(a *[sigSide * sigSide]float64, o int) [sigSide * sigSide]float64 {
	var out [sigSide * sigSide]float64
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
	const grid = 64
	b := img.Bounds()
	if b.Dx() < 2 {
		return 0, 0
	}
	luma := func(x, y int) float64 {
		r, g, bl, _ := img.At(x, y).RGBA()
		return (299*float64(r) + 587*float64(g) + 114*float64(bl)) / 1000 / 257
	}
	var a, c []float64
	for i := 0; i < grid; i++ {
		y := b.Min.Y + i*b.Dy()/grid
		for j := 0; j < grid; j++ {
			x := b.Min.X + j*(b.Dx()-1)/grid
			a = append(a, luma(x, y))
			c = append(c, luma(x+1, y))
		}
	}
	ma, sa := meanStd(a)
	mc, sc := meanStd(c)
	if sa < 1e-6 || sc < 1e-6 {
		return 0, sa
	}
	var sum float64
	for i := range a {
		sum += (a[i] - ma) * (c[i] - mc)
	}
	return 1 - sum/(float64(len(a))*sa*sc), sa
}

// colours is a picture's colour histogram: 4 levels per channel, sampled
// on a grid, summing to 1.
func colours(img image.Image) [64]float64 {
	const grid = 48
	var h [64]float64
	b := img.Bounds()
	for i := 0; i < grid; i++ {
		y := b.Min.Y + i*b.Dy()/grid
		for j := 0; j < grid; j++ {
			x := b.Min.X + j*b.Dx()/grid
			r, g, bl, _ := img.At(x, y).RGBA()
			h[(r>>14)*16+(g>>14)*4+bl>>14]++
		}
	}
	for i := range h {
		h[i] /= grid * grid
	}
	return h
}

// colourDistance is how differently two pictures are coloured, 0 (the same
// histogram) to 1 (no colour in common): half the L1 distance.
func colourDistance(a, b image.Image) float64 {
	ha, hb := colours(a), colours(b)
	var d float64
	for i := range ha {
		d += math.Abs(ha[i] - hb[i])
	}
	return d / 2
}

// Thresholds of the comparison. They are conservative on purpose: a false
// alarm replaces a good thumbnail with a worse one.
const (
	flatStd   = 3.0  // a grid this flat is one colour
	detailStd = 12.0 // an original (or a band of it) with this much contrast is not flat
	// Healthy thumbnails of real photos, at 96–720 px, quality 30–90, through
	// four resamplers, measured at least 0.995 alike; other pictures at most
	// 0.60 in any orientation.
	sameNCC      = 0.85 // at least this alike: the same picture
	otherNCC     = 0.7  // less alike than this in every orientation: another picture
	turnedMargin = 0.2  // a turned version must beat the upright one by this much
	// otherColours: a picture is only called another one when its colours
	// differ this much too: a re-rendering of the same scene (another crop,
	// another app's idea of the picture) keeps much of its colours. Measured:
	// thumbnails of the same photo 0.01–0.09, the same generated pattern drawn
	// at another scale 0.37–0.50, different photos 0.63–0.94.
	otherColours = 0.6
	noisyRough   = 0.6 // this rough is noise (photos stay well below 0.3)
)

// judge compares a thumbnail with the original as Ente's apps display it
// (orig nil for a video, whose frame differs between Ente's clients: then
// only blank and noise are judged). It returns OK, Blank, Garbled, Turned
// or WrongPicture, and how alike the two are (ncc, 0 without orig).
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
	same := ncc(&t.px, &o.px)
	origRough, _ := roughness(orig)
	switch {
	case noisy && origRough < noisyRough/2:
		return Garbled, same
	case t.std < flatStd && o.std >= detailStd:
		return Blank, same
	case flatBands(t, o):
		return Garbled, same
	case same >= sameNCC:
		return OK, same
	}
	best := same
	for k := 2; k <= 8; k++ {
		g := transformed(&o.px, k)
		best = max(best, ncc(&t.px, &g))
	}
	switch {
	case best >= sameNCC && best-same >= turnedMargin:
		return Turned, same
	case best < otherNCC && o.std >= detailStd && t.std >= flatStd && colourDistance(thumb, orig) >= otherColours:
		return WrongPicture, same
	}
	return OK, same // unsure: left alone
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
