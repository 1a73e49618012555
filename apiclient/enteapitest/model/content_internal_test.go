package model

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"image/jpeg"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/blake2b"
)

// Content is what its doc says, byte for byte: byte i is byte(i*131 +
// seed), across the pattern's 256-byte period and across reads.
func TestContentIsItsFormula(t *testing.T) {
	r := Content(1000, 7)
	var got []byte
	buf := make([]byte, 333) // reads that straddle the period
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	require.Len(t, got, 1000)
	for i, b := range got {
		require.Equal(t, byte(i*131+7), b, "byte %d", i)
	}
}

// b64hash is Ente's content hash written as its metadata holds it.
func b64hash(b []byte) string {
	h := blake2b.Sum512(b)
	return base64.StdEncoding.EncodeToString(h[:])
}

// The metadata hash is BLAKE2b-512 of the plaintext; a live photo's is
// its image's and its video's, "image:video", whatever their order in the
// zip; a live photo that is not a zip of both is hashed whole.
func TestContentHashIsEntes(t *testing.T) {
	data := []byte("an ordinary photo")
	assert.Equal(t, b64hash(data), contentHash(FileSpec{Data: data}))
	generated, err := io.ReadAll(Content(5000, 3))
	require.NoError(t, err)
	assert.Equal(t, b64hash(generated), contentHash(FileSpec{Size: 5000, Seed: 3}))

	img, vid := []byte("still"), []byte("motion")
	live := LivePhoto("heic", img, "mov", vid)
	want := b64hash(img) + ":" + b64hash(vid)
	assert.Equal(t, want, contentHash(FileSpec{FileType: 2, Data: live}))
	assert.Equal(t, b64hash(live), contentHash(FileSpec{FileType: 0, Data: live}), "only a live photo is hashed by parts")

	var swapped bytes.Buffer
	zw := zip.NewWriter(&swapped)
	for _, p := range []struct {
		name string
		data []byte
	}{{"video.mov", vid}, {"image.heic", img}} {
		w, err := zw.Create(p.name)
		require.NoError(t, err)
		_, err = w.Write(p.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	assert.Equal(t, want, contentHash(FileSpec{FileType: 2, Data: swapped.Bytes()}))

	var half bytes.Buffer
	zw = zip.NewWriter(&half)
	w, err := zw.Create("image.heic")
	require.NoError(t, err)
	_, err = w.Write(img)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	assert.Equal(t, b64hash(half.Bytes()), contentHash(FileSpec{FileType: 2, Data: half.Bytes()}), "no video part")
	notZip := []byte("not a zip")
	assert.Equal(t, b64hash(notZip), contentHash(FileSpec{FileType: 2, Data: notZip}))
}

// The thumbnails the fake makes are real JPEGs of the size they claim,
// and differ by name.
func TestFakeJPEGsAreJPEGs(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		w, h int
	}{{FakeJPEG("a"), 96, 72}, {PlaceholderJPEG(), 300, 150}} {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(c.b))
		require.NoError(t, err)
		assert.Equal(t, [2]int{c.w, c.h}, [2]int{cfg.Width, cfg.Height})
	}
	assert.NotEqual(t, FakeJPEG("a"), FakeJPEG("b"))
}
