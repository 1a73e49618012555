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

	"github.com/quak-photos/quak/download/secretstream"
)

// Ente's thumbnail rules (ENTE_PROTOCOL.md §8.1): the longer side at most
// 720 px, JPEG, quality 70 stepped down.
const (
	MaxSide = 720
	// minSide is the smallest longer side quak will shrink to before it
	// calls a thumbnail too large: below it a thumbnail shows nothing.
	minSide = 48
	// MaxPixels caps what quak decodes (a 100-megapixel image takes 400 MB
	// as RGBA); larger sources are reported unsupported.
	MaxPixels = 100_000_000
)

// qualities are tried in order at each size, as Ente's clients step down.
var qualities = []int{70, 60, 50, 40, 30}

// ErrTooLarge reports that no thumbnail within the size rule could be made:
// museum refuses a new thumbnail larger than the one on record.
var ErrTooLarge = errors.New("no thumbnail fits within the size on record")

// ErrUnsupported reports a source quak cannot make a thumbnail from.
var ErrUnsupported = errors.New("unsupported source")

// encryptedSize is the object size of a thumbnail of n JPEG bytes: one
// secretstream FINAL message.
func encryptedSize(n int) int64 { return int64(n) + secretstream.Overhead }

// Fit renders img as Ente's thumbnail whose encrypted size is at most
// budget bytes: quality steps down from 70 at 720 px, then the size shrinks
// by a fifth at a time. It returns the JPEG, or ErrTooLarge.
func Fit(img image.Image, budget int64) ([]byte, error) {
	b := img.Bounds()
	if b.Dx() < 1 || b.Dy() < 1 {
		return nil, fmt.Errorf("%w: empty image", ErrUnsupported)
	}
	side := min(max(b.Dx(), b.Dy()), MaxSide)
	src := img
	var buf bytes.Buffer
	for ; side >= minSide; side = side * 4 / 5 {
		scaled := scale(src, side)
		src = scaled // each smaller size is made from the last: cheap
		for _, q := range qualities {
			buf.Reset()
			if err := jpeg.Encode(&buf, scaled, &jpeg.Options{Quality: q}); err != nil {
				return nil, err
			}
			if encryptedSize(buf.Len()) <= budget {
				return bytes.Clone(buf.Bytes()), nil
			}
		}
	}
	return nil, ErrTooLarge
}

// scale returns img with its longer side at most side px, aspect kept,
// flattened onto white (JPEG has no alpha; a transparent PNG stays readable).
func scale(img image.Image, side int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w >= h && w > side {
		w, h = side, max(1, (h*side+w/2)/w)
	} else if h > w && h > side {
		w, h = max(1, (w*side+h/2)/h), side
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
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
