package thumbnails

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// thumbStore is the store route of f's original thumbnail object.
func (fx *hfix) thumbStore(f *enteapitest.File) string {
	return fmt.Sprintf("GET /store/%d/thumb-%d", fx.u.ID, f.ID)
}

// museum records a replaced thumbnail's size in object_keys, not in
// files.info: a repaired file reads ok on the next run, not unknown, though
// its length differs from the thumbSize the listing announces.
func TestRepairedFileReadsOkOnEveryLaterRun(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(500, 400, 3)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.run(t, fx.options(t))
	require.Equal(t, Repaired, fx.event(t, f.ID).Action)
	require.NotEqual(t, f.InfoThumbnailSize(), f.RecordedThumbnailSize(), "the listing now announces a stale size")
	for i := 0; i < 2; i++ {
		fx.events = nil
		sum := fx.run(t, fx.options(t))
		assert.Equal(t, map[Class]int{OK: 1}, sum.Classes)
		assert.True(t, sum.Healthy())
	}
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.Zero(t, fx.s.ExactRepeats())
}

// The budget is the existing object's recorded size, as museum compares it:
// a thumbnail replaced earlier by a smaller one and then lost again is
// fitted to the smaller size, and the commit is accepted at once.
func TestBudgetIsTheRecordedObjectSize(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(600, 400, 4)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	f.RecordThumbnailSize(20000)
	tiny := fx.album.AddFile(enteapitest.FileSpec{Title: "y.jpg", Data: jpegOf(t, photo(600, 400, 5)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	tiny.RecordThumbnailSize(300)
	sum := fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	assert.Equal(t, int64(20000), e.Budget)
	assert.LessOrEqual(t, e.Size, int64(20000))
	assert.Equal(t, TooLarge, fx.event(t, tiny.ID).Action)
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"), "no commit museum refuses is sent")
	assert.Equal(t, 1, fx.s.Requests("GET /files/upload-urls"), "nothing uploaded for the one that cannot fit")
	assert.Equal(t, []int64{tiny.ID}, sum.Problems)
	assert.Zero(t, fx.s.ExactRepeats())
}

// A recorded size that is the one files.info announces takes two questions
// to confirm (at least it, not more), and it is asked once per file.
func TestRecordedSizeIsConfirmedCheaply(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(600, 400, 4)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	assert.Equal(t, f.InfoThumbnailSize(), e.Budget)
	assert.Equal(t, 2, fx.s.Requests("GET /files/large-thumbnails"))
}

// Without a size from files.info, the recorded size is found by a binary
// search over large-thumbnails: exactly, in 24 questions (up to 16 MiB).
func TestRecordedSizeIsSearchedWithoutAGuess(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(600, 400, 4)), NoInfo: true,
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	f.RecordThumbnailSize(54321)
	fx.s.Inject("POST /files/info", enteapitest.Status(400)) // refused: no guess
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	assert.Equal(t, int64(54321), e.Budget)
	assert.Equal(t, 24, fx.s.Requests("GET /files/large-thumbnails"))
}

// One 404 from the object store is not proof of loss: the healthy
// thumbnail is read again and left alone.
func TestSingle404RepairsNothing(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(200, 100, 1))})
	fx.s.Inject(fx.thumbStore(f), enteapitest.Status(404))
	sum := fx.run(t, fx.options(t))
	assert.Equal(t, OK, fx.event(t, f.ID).Class)
	assert.Equal(t, 2, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", f.ID)))
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Zero(t, fx.s.RequestsWithPrefix("GET /files/download/"))
	assert.True(t, sum.Healthy())
}

// A thumbnail cut on the way at every look is network trouble: unknown,
// never corrupt, never replaced.
func TestCutEveryTimeIsNetworkTrouble(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(200, 100, 1))})
	o := fx.options(t)
	for range o.Policy.MaxAttempts {
		fx.s.Inject(fx.thumbStore(f), enteapitest.CutAfter(100))
	}
	sum := fx.run(t, o)
	e := fx.event(t, f.ID)
	assert.Equal(t, Unknown, e.Class)
	assert.ErrorIs(t, e.Err, errCut)
	assert.Equal(t, o.Policy.MaxAttempts, fx.s.Requests(fx.thumbStore(f)), "one look per attempt, no more")
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, []int64{f.ID}, sum.Problems)
}

// Cuts do not count as looks: a thumbnail cut twice and then whole is
// healthy, and left alone.
func TestCutTwiceThenWholeIsOK(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(200, 100, 1))})
	fx.s.Inject(fx.thumbStore(f), enteapitest.CutAfter(100), enteapitest.CutAfter(7))
	sum := fx.run(t, fx.options(t))
	assert.Equal(t, OK, fx.event(t, f.ID).Class)
	assert.Equal(t, 3, fx.s.Requests(fx.thumbStore(f)))
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.True(t, sum.Healthy())
}

// A decryption header that is not a header is a bad record, not damaged
// bytes: reported, not repaired.
func TestMalformedHeaderIsReportedNotRepaired(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(200, 100, 1))})
	f.BreakThumbnailHeader()
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	assert.Equal(t, Unknown, e.Class)
	assert.Equal(t, Reported, e.Action)
	assert.Error(t, e.Err)
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Zero(t, fx.s.RequestsWithPrefix("GET /files/download/"))
}

// Trashed files and files removed from every album are not the account's
// library any more: not listed, not checked.
func TestTrashedAndRemovedAreNotListed(t *testing.T) {
	fx := newFix(t)
	keep := fx.album.AddFile(enteapitest.FileSpec{Title: "k.jpg", Data: []byte("k")})
	trashed := fx.album.AddFile(enteapitest.FileSpec{Title: "t.jpg", Data: []byte("t"), LostThumbnail: true})
	removed := fx.album.AddFile(enteapitest.FileSpec{Title: "r.jpg", Data: []byte("r"), LostThumbnail: true})
	trashed.Trash()
	fx.album.Remove(removed)
	sum := fx.run(t, fx.options(t))
	assert.Equal(t, 1, sum.Owned)
	assert.Equal(t, OK, fx.event(t, keep.ID).Class)
	for _, f := range []*enteapitest.File{trashed, removed} {
		assert.Zero(t, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", f.ID)))
	}
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
}

// An original whose metadata has no hash cannot be checked, so it is never
// drawn from, downloaded or in --from's folder.
func TestEmptyHashOriginalIsNeverUsed(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(200, 100, 1)), NoHash: true,
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	sum := fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	assert.Equal(t, Failed, e.Action)
	assert.ErrorContains(t, e.Err, "no hash")
	assert.Zero(t, fx.s.RequestsWithPrefix("GET /files/download/"))
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, []int64{f.ID}, sum.Problems)
}

// A live photo's image part must match the image half of its hash.
func TestLivePhotoImageIsHashChecked(t *testing.T) {
	fx := newFix(t)
	zip := enteapitest.LivePhoto("jpg", jpegOf(t, photo(640, 480, 7)), "mov", []byte("moving"))
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "live.jpg", FileType: 2, Data: zip,
		Hash:          "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:BBBB",
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	assert.Equal(t, Failed, e.Action)
	assert.ErrorContains(t, e.Err, "does not match its hash")
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
}

// museum fails a whole /files/info batch over one id it refuses: quak
// splits the batch and still learns every size.
func TestRefusedInfoBatchIsSplit(t *testing.T) {
	fx := newFix(t)
	for i := 0; i < 3; i++ {
		fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i),
			Data: jpegOf(t, photo(200, 150, byte(i))), NoInfo: true, LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	}
	fx.s.Inject("POST /files/info", enteapitest.Status(400))
	sum := fx.run(t, fx.options(t))
	assert.Equal(t, 3, fx.s.Requests("POST /files/info"), "one refused batch, then its two halves")
	assert.Equal(t, 3, sum.Actions[Repaired])
	assert.Zero(t, fx.s.ExactRepeats())
}

// quadrant is w×h, red in its top-left quarter, blue elsewhere.
func quadrant(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{0, 0, 255, 255}
			if x < w/2 && y < h/2 {
				c = color.RGBA{255, 0, 0, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// Every EXIF orientation, 4 (mirrored upside down) and 7 (transverse)
// included, puts the stored top-left corner where Ente's apps show it.
func TestEveryEXIFOrientationPlacesTheCorner(t *testing.T) {
	wide := map[string]image.Point{"tl": {10, 10}, "tr": {70, 10}, "bl": {10, 30}, "br": {70, 30}}
	tall := map[string]image.Point{"tl": {10, 20}, "tr": {30, 20}, "bl": {10, 60}, "br": {30, 60}}
	for o, want := range map[uint16]string{1: "tl", 2: "tr", 3: "br", 4: "bl", 5: "tl", 6: "tr", 7: "br", 8: "bl"} {
		p := filepath.Join(t.TempDir(), "photo.jpg")
		require.NoError(t, os.WriteFile(p, withOrientation(t, quadrant(80, 40), o, binary.LittleEndian), 0o600))
		img, err := SystemTools().decodeFile(context.Background(), p, t.TempDir(), 0)
		require.NoError(t, err)
		pts := wide
		if o >= 5 {
			pts = tall
			assert.Equal(t, image.Pt(40, 80), img.Bounds().Size(), "orientation %d", o)
		}
		for name, pt := range pts {
			assert.Equal(t, name == want, isRed(img.At(pt.X, pt.Y)), "orientation %d, corner %s", o, name)
		}
	}
}
