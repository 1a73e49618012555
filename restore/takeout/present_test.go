package takeout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Files Ente's phone app uploaded before the import (the same content and
// name) are added to the Takeout's albums, never uploaded again; a large
// one is only hashed, not sent.
func TestImportAddsWhatTheAccountHasToItsAlbumsWithoutUploading(t *testing.T) {
	for _, kind := range []string{"zip", "tgz", "dir"} {
		t.Run(kind, func(t *testing.T) {
			a := newAccount(t)
			files := bigTakeout(bigSize)
			camera := a.u.AddAlbum("Camera")
			camera.AddFile(enteapitest.FileSpec{Title: "VID_0001.mp4", FileType: 1, Data: files[1].Data})
			camera.AddFile(enteapitest.FileSpec{Title: "IMG_0001.jpg", Data: files[3].Data})
			paths := writeParts(t, t.TempDir(), [][]tfile{files}, kind)
			sum := a.mustImport(paths)
			assert.Equal(t, 0, sum.Uploaded)
			assert.Equal(t, 2, sum.Present)
			assert.Equal(t, 2, sum.Added)
			assert.Equal(t, 0, a.s.Requests("GET /files/multipart-upload-urls"), "nothing of the video sent")
			assert.Equal(t, 0, a.s.Requests("POST /files"))
			got := a.files()
			require.Len(t, got, 2)
			for _, f := range got {
				assert.Equal(t, []string{"Camera", "Videos"}, f.albums, f.meta.Title)
			}
		})
	}
}

// A later Takeout that overlaps the first (Google's export every two
// months) uploads only what is new, whatever its parts are called.
func TestAnOverlappingTakeoutUploadsOnlyWhatIsNew(t *testing.T) {
	a := newAccount(t)
	first := []tfile{
		f(gp+"Photos from 2020/A.jpg", jpeg(21)), f(gp+"Photos from 2020/A.jpg.json", photoJSON("A.jpg", t2020, nil)),
		f(gp+"Photos from 2020/B.jpg", jpeg(22)), f(gp+"Photos from 2020/B.jpg.json", photoJSON("B.jpg", t2020+1, nil)),
	}
	later := append(append([]tfile{}, first...),
		f(gp+"Photos from 2021/C.jpg", jpeg(23)), f(gp+"Photos from 2021/C.jpg.json", photoJSON("C.jpg", t2021, nil)),
		f(gp+"Holiday/B.jpg", jpeg(22)), f(gp+"Holiday/B.jpg.json", photoJSON("B.jpg", t2020+1, nil)),
		f(gp+"Holiday/metadata.json", albumJSON("Holiday")))
	sum := a.mustImport(writeParts(t, t.TempDir(), [][]tfile{first}, "zip"))
	assert.Equal(t, 2, sum.Uploaded)
	sum = a.mustImport(writeParts(t, t.TempDir(), split(later, 2), "tgz"))
	assert.Equal(t, 1, sum.Uploaded, "only C.jpg")
	assert.Equal(t, 2, sum.Present)
	assert.Equal(t, 1, sum.Added, "B.jpg into its new album")
	assert.Len(t, a.files(), 3)
}

// A partner's photos are left out unless asked for.
func TestPartnersPhotosOnlyWhenAsked(t *testing.T) {
	paths := writeParts(t, t.TempDir(), [][]tfile{trapTakeout()}, "zip")
	tk := openTakeout(t, paths, Options{})
	assert.Empty(t, byTitle(t, tk, "IMG_0009.jpg"))
	assert.Equal(t, 1, tk.Report.Parts[0].Skipped[SkipPartner])
	tk = openTakeout(t, paths, Options{IncludePartner: true})
	assert.Len(t, byTitle(t, tk, "IMG_0009.jpg"), 1)
	assert.Zero(t, tk.Report.Parts[0].Skipped[SkipPartner])
}
