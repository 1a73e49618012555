package thumbnails

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// thumbJPEG is img encoded as a thumbnail, padded after its end (which
// decoders ignore) so the recorded size leaves room for a real one.
func thumbJPEG(t *testing.T, img image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: q}))
	return append(b.Bytes(), make([]byte, roomy-b.Len())...)
}

func realPhoto(t *testing.T) ([]byte, image.Image) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "video-001.jpeg"))
	require.NoError(t, err)
	img, err := Decode(bytes.NewReader(data))
	require.NoError(t, err)
	return data, img
}

// --check-content finds blank, garbled, turned and swapped thumbnails and
// repairs them; healthy ones, made by other encoders and resamplers, are
// left alone; without the flag nothing is compared.
func TestCheckContentFindsAndRepairsWrongPictures(t *testing.T) {
	fx := newFix(t)
	data, orig := realPhoto(t)
	good := thumbOf(t, orig, 150, draw.CatmullRom, 70)
	other := jpegOf(t, photo(300, 200, 9))
	otherImg, err := Decode(bytes.NewReader(other))
	require.NoError(t, err)
	add := func(title string, thumb []byte) *enteapitest.File {
		return fx.album.AddFile(enteapitest.FileSpec{Title: title, Data: data, Thumbnail: thumb})
	}
	want := map[*enteapitest.File]Class{
		add("black.jpg", thumbJPEG(t, flat(150, 103, color.Black), 70)):                     Blank,
		add("grey.jpg", thumbJPEG(t, flat(150, 103, color.Gray{128}), 70)):                  Blank,
		add("noise.jpg", thumbJPEG(t, noise(150, 103, 4), 90)):                              Garbled,
		add("halfgrey.jpg", thumbJPEG(t, greyBelow(good, 0.5), 70)):                         Garbled,
		add("turned.jpg", thumbJPEG(t, orient(good, 6), 70)):                                Turned,
		add("mirrored.jpg", thumbJPEG(t, orient(good, 2), 70)):                              Turned,
		add("swapped.jpg", thumbJPEG(t, thumbOf(t, otherImg, 150, draw.BiLinear, 70), 70)):  WrongPicture,
		add("web.jpg", thumbJPEG(t, thumbOf(t, orig, 150, draw.BiLinear, 70), 70)):          OK,
		add("mobile.jpg", thumbJPEG(t, thumbOf(t, orig, 128, draw.ApproxBiLinear, 50), 50)): OK,
		add("tiny.jpg", thumbJPEG(t, thumbOf(t, orig, 96, draw.NearestNeighbor, 30), 30)):   OK,
	}

	// Without the flag, every one of them decrypts and decodes: ok.
	sum := fx.run(t, fx.options(t))
	assert.Equal(t, map[Class]int{OK: len(want)}, sum.Classes)
	assert.Zero(t, fx.s.RequestsWithPrefix("GET /files/download/"), "no original read without --check-content")

	fx.events = nil
	o := fx.options(t)
	o.CheckContent = true
	o.DryRun = true
	fx.run(t, o)
	for f, class := range want {
		e := fx.event(t, f.ID)
		assert.Equal(t, class, e.Class, "%s", f.Spec().Title)
		if class != OK {
			assert.Equal(t, WouldRepair, e.Action, "%s: %v", f.Spec().Title, e.Err)
		}
	}
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"), "a dry run changes nothing")

	fx.events = nil
	o.DryRun = false
	sum = fx.run(t, o)
	for f, class := range want {
		e := fx.event(t, f.ID)
		if class == OK {
			assert.Equal(t, None, e.Action, "%s", f.Spec().Title)
			continue
		}
		require.Equal(t, Repaired, e.Action, "%s: %v", f.Spec().Title, e.Err)
		img, err := Decode(bytes.NewReader(newThumbnail(t, f)))
		require.NoError(t, err)
		got, far := judge(img, orig)
		assert.Equal(t, OK, got, "%s repaired: %.1f apart", f.Spec().Title, far)
	}
	assert.Equal(t, 7, fx.s.Requests("PUT /files/thumbnail"))
	assert.True(t, sum.Healthy(), "%v", sum.Problems)
	for f := range want {
		assert.Equal(t, 2, fx.s.Requests(fmt.Sprintf("GET /files/download/%d", f.ID)),
			"%s: its original read once per run, for the check and the repair", f.Spec().Title)
	}

	// A later run finds every thumbnail right.
	fx.events = nil
	sum = fx.run(t, o)
	assert.Equal(t, map[Class]int{OK: len(want)}, sum.Classes)
	assert.Equal(t, 7, fx.s.Requests("PUT /files/thumbnail"))
	assert.Zero(t, fx.s.ExactRepeats())
}

// Regression ("a thumbnail of another photo is left alone"): a thumbnail
// of another photo with the original's layout is replaced by quak's render
// of the original; the healthy thumbnail of the same original, made by
// another resampler, is left alone.
func TestCheckContentReplacesALookalike(t *testing.T) {
	fx := newFix(t)
	sun := color.RGBA{255, 250, 220, 255}
	orig := discScene(960, 720, color.RGBA{40, 90, 200, 255}, color.RGBA{230, 150, 60, 255}, sun, 0.25, 0.25, 0.12)
	other := discScene(720, 540, color.RGBA{12, 48, 32, 255}, color.RGBA{183, 152, 153, 255}, sun, 0.27, 0.24, 0.11)
	data := jpegOf(t, orig)
	lookalike := fx.album.AddFile(enteapitest.FileSpec{Title: "lookalike.jpg", Data: data, Thumbnail: thumbJPEG(t, other, 70)})
	healthy := fx.album.AddFile(enteapitest.FileSpec{Title: "healthy.jpg", Data: data,
		Thumbnail: thumbJPEG(t, thumbOf(t, orig, 720, draw.BiLinear, 70), 70)})
	o := fx.options(t)
	o.CheckContent = true
	sum := fx.run(t, o)

	e := fx.event(t, lookalike.ID)
	assert.Equal(t, WrongPicture, e.Class)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	base, err := Decode(bytes.NewReader(data))
	require.NoError(t, err)
	want, err := Fit(base, e.Budget)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, newThumbnail(t, lookalike)), "the render of the original was uploaded")
	assert.Equal(t, None, fx.event(t, healthy.ID).Action)
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.True(t, sum.Healthy(), "%v", sum.Problems)
}

// --ids limits the run to those files; an id that is not one of the
// account's files is reported.
func TestIDsLimitTheRun(t *testing.T) {
	fx := newFix(t)
	a := fx.album.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: jpegOf(t, photo(200, 100, 1)), LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	b := fx.album.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: jpegOf(t, photo(200, 100, 2)), LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	o := fx.options(t)
	o.IDs = []int64{b.ID, 424242}
	sum := fx.run(t, o)
	assert.Equal(t, 1, sum.Owned)
	assert.Equal(t, Repaired, fx.event(t, b.ID).Action)
	assert.ErrorIs(t, fx.event(t, 424242).Err, errNotOwned)
	for _, e := range fx.events {
		assert.NotEqual(t, a.ID, e.FileID)
	}
	assert.Equal(t, []int64{424242}, sum.Problems)
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
}

// A flagged thumbnail is replaced only by one clearly closer to the
// original: a video whose frame is black stays as it is, reported.
func TestFlaggedButNotCloserIsKept(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "dark.mp4", FileType: 1, Data: []byte("video"),
		Thumbnail: thumbJPEG(t, flat(320, 180, color.Black), 70)})
	o := fx.options(t)
	o.CheckContent = true
	black := pngOf(t, flat(640, 360, color.Black))
	o.Tools = Tools{
		LookPath: func(name string) (string, error) {
			if name == "ffmpeg" {
				return "/bin/ffmpeg", nil
			}
			return "", fmt.Errorf("no %s", name)
		},
		Run: func(_ context.Context, _ string, args ...string) ([]byte, error) {
			return nil, os.WriteFile(args[len(args)-1], black, 0o600)
		},
	}
	sum := fx.run(t, o)
	e := fx.event(t, f.ID)
	assert.Equal(t, Blank, e.Class)
	assert.Equal(t, Kept, e.Action)
	assert.ErrorIs(t, e.Err, errNotCloser)
	assert.Zero(t, fx.s.Requests("GET /files/upload-urls"))
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, []int64{f.ID}, sum.Problems)
}

// A flagged thumbnail is replaced only when quak's render is at most half
// as far from the original as the old thumbnail: a render exactly half as
// far replaces it, one a hair further keeps it. The same holds for every
// class --check-content flags, and the render is what would be uploaded.
// A lost or corrupt one is always replaced.
func TestRenderMustBeAtMostHalfAsFar(t *testing.T) {
	base := photo(320, 240, 3)
	jpg, err := Fit(base, roomy)
	require.NoError(t, err)
	img, err := Decode(bytes.NewReader(jpg))
	require.NoError(t, err)
	_, far := judge(img, base)
	require.Positive(t, far)
	r := &run{o: Options{DryRun: true}}
	for _, class := range []Class{WrongPicture, Turned, Blank, Garbled} {
		for _, c := range []struct {
			old  float64
			want Action
		}{
			{2 * far, WouldRepair},
			{math.Nextafter(2*far, 0), Kept},
			{otherApart, WouldRepair},
		} {
			cand := &candidate{item: &catalog.Item{FileID: 1}, base: base, far: c.old, budget: roomy}
			action, size, err := r.repair(context.Background(), cand, class)
			assert.Equal(t, c.want, action, "%s, the old thumbnail %.4f apart, the render %.4f", class, c.old, far)
			assert.Equal(t, encryptedSize(len(jpg)), size)
			if c.want == Kept {
				assert.ErrorIs(t, err, errNotCloser)
			} else {
				assert.NoError(t, err)
			}
		}
	}
	for _, class := range []Class{Lost, Corrupt} {
		cand := &candidate{item: &catalog.Item{FileID: 1}, base: base, budget: roomy}
		action, _, err := r.repair(context.Background(), cand, class)
		assert.Equal(t, WouldRepair, action, "%s: %v", class, err)
	}
}
