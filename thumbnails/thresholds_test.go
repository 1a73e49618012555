package thumbnails

import (
	"image"
	"image/color"
	"testing"

	"github.com/stretchr/testify/assert"
)

// tile is a sigSide×sigSide grey picture, one pixel to each cell of the
// grid pictures are compared on: its grid is exactly its pixels, so a test
// can put a thumbnail exactly on a threshold.
func tile(v func(x, y int) int) image.Image {
	img := image.NewGray(image.Rect(0, 0, sigSide, sigSide))
	for y := 0; y < sigSide; y++ {
		for x := 0; x < sigSide; x++ {
			img.SetGray(x, y, color.Gray{Y: uint8(v(x, y))})
		}
	}
	return img
}

// ramp is a smooth original with detail everywhere, different in every
// orientation, with room above it for brighter copies.
func ramp(x, y int) int { return 60 + 5*x + 2*y }

// brighter is img with every pixel d levels brighter.
func brighter(img image.Image, d int) image.Image {
	return tile(func(x, y int) int {
		g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
		return int(g.Y) + d
	})
}

// alternate is a tile whose pixels alternate between a and b like a
// chessboard: spread exactly |a-b|/2.
func alternate(a, b int) image.Image {
	return tile(func(x, y int) int {
		if (x+y)%2 == 0 {
			return a
		}
		return b
	})
}

// leftRight is a tile a on its left half and b on its right: smooth, with
// spread exactly |a-b|/2 in every row.
func leftRight(a, b int) image.Image {
	return tile(func(x, _ int) int {
		if x < sigSide/2 {
			return a
		}
		return b
	})
}

type verdictCase struct {
	name        string
	thumb, orig image.Image
	want        Class
}

func checkVerdicts(t *testing.T, cases []verdictCase) {
	t.Helper()
	for _, c := range cases {
		class, far := judge(c.thumb, c.orig)
		assert.Equal(t, c.want, class, "%s (%.2f apart)", c.name, far)
	}
}

// A thumbnail otherApart (8) levels of luma from its original is clearly
// unlike it; one level less is as close as a healthy thumbnail can be.
func TestOtherApartIsTheLine(t *testing.T) {
	orig := tile(ramp)
	checkVerdicts(t, []verdictCase{
		{"7 levels brighter", brighter(orig, 7), orig, OK},
		{"8 levels brighter", brighter(orig, 8), orig, WrongPicture},
		{"7 levels darker", brighter(orig, -7), orig, OK},
		{"8 levels darker", brighter(orig, -8), orig, WrongPicture},
	})
}

// A thumbnail is turned when a turned or mirrored original is within
// otherApart of it, in each of the seven orientations.
func TestTurnedWithinOtherApart(t *testing.T) {
	orig := tile(ramp)
	for o := 2; o <= 8; o++ {
		turned := orient(orig, o)
		checkVerdicts(t, []verdictCase{
			{"orientation " + string(rune('0'+o)), turned, orig, Turned},
			{"orientation " + string(rune('0'+o)) + ", 7 brighter", brighter(turned, 7), orig, Turned},
			{"orientation " + string(rune('0'+o)) + ", 8 brighter", brighter(turned, 8), orig, WrongPicture},
		})
	}
}

// A thumbnail is blank when its spread is under flatStd (3) and the
// original's at least detailStd (12); a video's, without an original, when
// its spread is under flatStd.
func TestBlankBetweenFlatAndDetail(t *testing.T) {
	detailed := leftRight(90, 114) // spread 12
	checkVerdicts(t, []verdictCase{
		{"spread 2", alternate(100, 104), detailed, Blank},
		{"spread 3", alternate(100, 106), detailed, WrongPicture},
		{"flat, original's spread 12", tile(func(int, int) int { return 102 }), detailed, Blank},
		{"flat, original's spread 11", tile(func(int, int) int { return 102 }), leftRight(91, 113), WrongPicture},
		{"a video's, spread 2", alternate(100, 104), nil, Blank},
		{"a video's, spread 3", alternate(100, 106), nil, OK},
	})
}

// withBand is img with the quarter of its rows from row first replaced
// by band.
func withBand(img, band image.Image, first int) image.Image {
	return tile(func(x, y int) int {
		src := img
		if y >= first && y < first+sigSide/4 {
			src = band
		}
		return int(color.GrayModel.Convert(src.At(x, y)).(color.Gray).Y)
	})
}

// A quarter of a thumbnail is a grey band when its spread is under half
// of flatStd (1.5) where the original's is at least detailStd (12).
func TestGreyBandBetweenFlatAndDetail(t *testing.T) {
	orig, plain := leftRight(90, 114), leftRight(91, 113)
	bottom, top := sigSide*3/4, 0
	checkVerdicts(t, []verdictCase{
		{"bottom band, spread 1", withBand(orig, alternate(101, 103), bottom), orig, Garbled},
		{"bottom band, spread 1.5", withBand(orig, alternate(100, 103), bottom), orig, OK},
		{"top band, spread 1", withBand(orig, alternate(101, 103), top), orig, Garbled},
		{"band where the original's spread is 11", withBand(plain, alternate(101, 103), bottom), plain, OK},
	})
	// Each band is weighed against the same band of the original: here
	// only its lowest quarter has detail.
	flatAbove := withBand(tile(func(int, int) int { return 102 }), orig, bottom)
	checkVerdicts(t, []verdictCase{
		{"band flat where only it has detail", withBand(flatAbove, alternate(101, 103), bottom), flatAbove, Garbled},
	})
}

// stripes is a w×w picture of one-pixel columns alternating between a and
// b: noise to the eye, its samples spread exactly |a-b|/2.
func stripes(w, a, b int) image.Image {
	img := image.NewGray(image.Rect(0, 0, w, w))
	for y := 0; y < w; y++ {
		for x := 0; x < w; x++ {
			v := a
			if x%2 == 1 {
				v = b
			}
			img.SetGray(x, y, color.Gray{Y: uint8(v)})
		}
	}
	return img
}

// A rough thumbnail is noise when its samples spread at least detailStd
// (12) and its original is smooth; an original that is itself rough (a
// picture of static) has a rough thumbnail.
func TestNoiseNeedsDetailAndASmoothOriginal(t *testing.T) {
	smooth := tile(ramp)
	static := noise(65, 65, 5)
	checkVerdicts(t, []verdictCase{
		{"stripes spread 12", stripes(65, 90, 114), smooth, Garbled},
		{"stripes spread 11", stripes(65, 91, 113), smooth, Blank},
		{"static, of static", static, static, OK},
	})
	class, _ := judge(stripes(65, 90, 114), nil)
	assert.Equal(t, Garbled, class, "a video's stripes spread 12")
	class, _ = judge(stripes(65, 91, 113), nil)
	assert.Equal(t, Blank, class, "a video's stripes spread 11")
}
