package model

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// Content is the generated plaintext of a FileSpec with Data nil: byte i is
// byte(i*131 + seed).
func Content(size int64, seed byte) io.Reader {
	return io.LimitReader(&patternReader{seed: seed}, size)
}

type patternReader struct {
	i    int64
	seed byte
}

// Read copies from one period of the pattern (it repeats every 256 bytes),
// so serving gigabytes costs little CPU.
func (p *patternReader) Read(b []byte) (int, error) {
	var period [512]byte
	for k := range period {
		period[k] = byte(k*131) + p.seed
	}
	n := 0
	for n < len(b) {
		c := copy(b[n:], period[p.i%256:p.i%256+256])
		n += c
		p.i += int64(c)
	}
	return n, nil
}

func (spec FileSpec) plaintext() io.Reader {
	if spec.Data != nil {
		return bytes.NewReader(spec.Data)
	}
	return Content(spec.Size, spec.Seed)
}

func (spec FileSpec) plainSize() int64 {
	if spec.Data != nil {
		return int64(len(spec.Data))
	}
	return spec.Size
}

// contentHash is Ente's metadata hash of the spec's plaintext.
func contentHash(spec FileSpec) string {
	if spec.FileType == 2 && spec.Data != nil {
		if h, ok := livePhotoHash(spec.Data); ok {
			return h
		}
	}
	h := keys.NewHash()
	if _, err := io.Copy(h, spec.plaintext()); err != nil {
		panic(err)
	}
	return keys.EncodeB64(h.Sum(nil))
}

// livePhotoHash is "imageHash:videoHash" over the zip's two parts.
func livePhotoHash(zipped []byte) (string, bool) {
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		return "", false
	}
	var img, vid string
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			return "", false
		}
		h := keys.NewHash()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return "", false
		}
		switch {
		case strings.HasPrefix(zf.Name, "image"):
			img = keys.EncodeB64(h.Sum(nil))
		case strings.HasPrefix(zf.Name, "video"):
			vid = keys.EncodeB64(h.Sum(nil))
		}
	}
	return img + ":" + vid, img != "" && vid != ""
}

// LivePhoto zips an image and a video part as Ente's clients do.
func LivePhoto(imageExt string, image []byte, videoExt string, video []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, part := range []struct {
		name string
		data []byte
	}{{"image." + imageExt, image}, {"video." + videoExt, video}} {
		w, err := zw.Create(part.name)
		if err != nil {
			panic(err)
		}
		_, _ = w.Write(part.data)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// FakeJPEG is a small real JPEG (96×72, colours drawn from name), as a
// thumbnail Ente's clients would have made.
func FakeJPEG(name string) []byte {
	h := keys.NewHash()
	_, _ = h.Write([]byte(name))
	sum := h.Sum(nil)
	img := image.NewRGBA(image.Rect(0, 0, 96, 72))
	for y := 0; y < 72; y++ {
		for x := 0; x < 96; x++ {
			img.Set(x, y, color.RGBA{sum[0] + byte(x), sum[1] + byte(y), sum[2] + byte(x^y), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// PlaceholderJPEG is a black 300×150 JPEG like the fixed one Ente's clients
// store when they cannot make a thumbnail.
func PlaceholderJPEG() []byte {
	img := image.NewGray(image.Rect(0, 0, 300, 150))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 75}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// mustSeal seals plaintext as one blob under key and header.
func mustSeal(key, header, plaintext []byte) []byte {
	ct, err := secretstream.SealBlob(key, header, plaintext)
	if err != nil {
		panic(err)
	}
	return ct
}
