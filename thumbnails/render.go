package thumbnails

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"

	// Registered decoders: what Go's own image packages (and x/image for
	// WebP) read. HEIC and video go through external tools (tools.go).
	_ "image/gif"
	_ "image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/quak-photos/quak/apiclient/secretstream"
)

// Ente's thumbnail rules (docs/protocol.md §8.1): the longer side at most
// 720 px, JPEG. Ente's web app encodes at quality 70, stepping down to 60
// and 50 while over 100 KiB; the mobile apps make 512 px at quality 50.
const (
	MaxSide = 720
	// minSide is the floor of the sizes quak shrinks through at a good
	// quality; only there does the quality drop below 50.
	minSide = 256
	// MaxPixels caps what quak decodes (a 100-megapixel image takes 400 MB
	// as RGBA); larger sources are reported unsupported.
	MaxPixels = 100_000_000
)

var (
	// sides are the longer sides quak shrinks through, each tried at
	// qualities before the next: a smaller, clean thumbnail looks better
	// than a blocky large one.
	sides = []int{720, 640, 576, 512, 448, 384, 320, minSide}
	// qualities are tried at every size, as Ente's web app steps down.
	qualities = []int{70, 60, 50}
	// floorQualities are tried last, at the smallest size: still a photo.
	floorQualities = []int{40, 30}
)

// ErrTooLarge reports that no thumbnail within the size rule could be made:
// museum refuses a new thumbnail larger than the one on record.
var ErrTooLarge = errors.New("no thumbnail fits within the size on record")

// ErrUnsupported reports a source quak cannot make a thumbnail from.
var ErrUnsupported = errors.New("unsupported source")

// encryptedSize is the object size of a thumbnail of n JPEG bytes: one
// secretstream FINAL message.
func encryptedSize(n int) int64 { return int64(n) + secretstream.Overhead }

// Fit renders img as Ente's thumbnail whose encrypted size is at most
// budget bytes. At each size of the ladder 720, 640, 576, 512 … 256 px
// (an image smaller than 720 px starts at its own size) it tries qualities
// 70, 60 and 50; only at the smallest size does the quality go down to 40
// and then 30. It returns the JPEG, or ErrTooLarge.
func Fit(img image.Image, budget int64) ([]byte, error) {
	b := img.Bounds()
	if b.Dx() < 1 || b.Dy() < 1 {
		return nil, fmt.Errorf("%w: empty image", ErrUnsupported)
	}
	top := min(max(b.Dx(), b.Dy()), MaxSide)
	ladder := []int{top}
	for _, s := range sides {
		if s < top {
			ladder = append(ladder, s)
		}
	}
	base := scale(img, top) // every smaller size is made from this one: cheap, one resampling each
	var buf bytes.Buffer
	try := func(im image.Image, q int) (bool, error) {
		buf.Reset()
		if err := jpeg.Encode(&buf, im, &jpeg.Options{Quality: q}); err != nil {
			return false, err
		}
		return encryptedSize(buf.Len()) <= budget, nil
	}
	var scaled image.Image
	for _, side := range ladder {
		scaled = base
		if side != top {
			scaled = scale(base, side)
		}
		for _, q := range qualities {
			if ok, err := try(scaled, q); err != nil || ok {
				return bytes.Clone(buf.Bytes()), err
			}
		}
	}
	for _, q := range floorQualities {
		if ok, err := try(scaled, q); err != nil || ok {
			return bytes.Clone(buf.Bytes()), err
		}
	}
	return nil, ErrTooLarge
}

// background is what transparent pixels become: black, as in Ente's web
// app, which draws the image on a transparent canvas and encodes it as JPEG
// (a browser turns transparent pixels black).
var background = color.Black

// scale returns img with its longer side at most side px, aspect kept,
// flattened onto background (JPEG has no alpha).
func scale(img image.Image, side int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w >= h && w > side {
		w, h = side, max(1, (h*side+w/2)/w)
	} else if h > w && h > side {
		w, h = max(1, (w*side+h/2)/h), side
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	if w == b.Dx() && h == b.Dy() {
		draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Over)
		return dst
	}
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Over, nil)
	return dst
}

// Decode reads an image that Go can decode (JPEG, PNG, GIF, WebP), refusing
// more than MaxPixels before allocating them. Other formats are
// ErrUnsupported.
func Decode(r io.ReadSeeker) (image.Image, error) {
	cfg, format, err := image.DecodeConfig(r)
	if err != nil {
		return nil, fmt.Errorf("%w: not an image Go can read (%w)", ErrUnsupported, err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, fmt.Errorf("%w: %s of %d×%d pixels is over quak's limit of %d", ErrUnsupported, format, cfg.Width, cfg.Height, MaxPixels)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("decoding the %s: %w", format, err)
	}
	return img, nil
}

// IsImage reports whether b decodes whole as an image, as a thumbnail must.
func IsImage(b []byte) bool {
	_, err := Decode(bytes.NewReader(b))
	return err == nil
}
