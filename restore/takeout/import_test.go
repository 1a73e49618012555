package takeout

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImportGivesTheAccountEveryPhotoOnceWithItsMetadata(t *testing.T) {
	for _, kinds := range [][]string{{"zip"}, {"tgz"}, {"zip", "tgz", "dir"}} {
		t.Run(kinds[0]+"x"+string(rune('0'+len(kinds))), func(t *testing.T) {
			a := newAccount(t)
			paths := writeParts(t, t.TempDir(), split(trapTakeout(), 3), kinds...)
			sum := a.mustImport(paths)
			assert.Equal(t, len(trapWant()), sum.Files)
			assert.Equal(t, len(trapWant()), sum.Uploaded)
			assert.Equal(t, wantViews(), a.views())

			again := a.mustImport(paths)
			assert.Equal(t, 0, again.Uploaded, "a second run uploads nothing")
			assert.Equal(t, len(trapWant()), again.Present)
			assert.Equal(t, 0, again.Added)
			assert.Equal(t, 0, again.AlbumsCreated)
			assert.Equal(t, wantViews(), a.views())
		})
	}
}

// bigTakeout holds a video too large to be held in memory (uploaded as it
// is read), with its JSON, beside a photo.
func bigTakeout(size int) []tfile {
	return []tfile{
		f(gp+"Videos/metadata.json", albumJSON("Videos")),
		f(gp+"Videos/VID_0001.mp4", movie(time.Unix(t2021, 0), size, false, 9)),
		f(gp+"Videos/VID_0001.mp4.json", photoJSON("VID_0001.mp4", t2021, map[string]any{"archived": true})),
		f(gp+"Videos/IMG_0001.jpg", jpeg(1)),
		f(gp+"Videos/IMG_0001.jpg.json", photoJSON("IMG_0001.jpg", t2019, nil)),
	}
}

// bigSize is more than the tests' import holds in memory (4 MiB / 3).
const bigSize = 3 << 19

func TestImportStreamsALargeFileInOnePass(t *testing.T) {
	for _, kind := range []string{"zip", "tgz", "dir"} {
		t.Run(kind, func(t *testing.T) {
			a := newAccount(t)
			files := bigTakeout(bigSize)
			paths := writeParts(t, t.TempDir(), [][]tfile{files}, kind)
			sum := a.mustImport(paths)
			assert.Equal(t, 2, sum.Uploaded)
			assert.Equal(t, 1, a.s.Requests("GET /files/multipart-upload-urls"), "the video streamed")
			got := a.files()
			require.Len(t, got, 2)
			for _, f := range got {
				if f.meta.Title == "VID_0001.mp4" {
					assert.True(t, bytes.Equal(files[1].Data, f.data), "the video's bytes")
					assert.True(t, f.archived)
					assert.Equal(t, []string{"Videos"}, f.albums)
					assert.Equal(t, t2021*1_000_000, f.meta.CreationTime)
				}
			}
			again := a.mustImport(paths)
			assert.Equal(t, 0, again.Uploaded)
			assert.Equal(t, 2, again.Present)
			assert.Equal(t, 1, a.s.Requests("GET /files/multipart-upload-urls"))
		})
	}
}

// A stream of several parts: each part sent as it is made, the upload
// completed once.
func TestImportStreamsALargeFileInParts(t *testing.T) {
	a := newAccount(t)
	files := bigTakeout(21 << 20)
	paths := writeParts(t, t.TempDir(), [][]tfile{files}, "zip")
	a.mustImport(paths)
	assert.Equal(t, 2+1+2, a.s.RequestsWithPrefix("PUT /store/"), "21 MiB: two parts (of 20 MiB and the rest); the photo; two thumbnails")
	assert.Equal(t, 1, a.s.RequestsWithPrefix("POST /store/"), "one completion")
	for _, f := range a.files() {
		if f.meta.Title == "VID_0001.mp4" {
			assert.True(t, bytes.Equal(files[1].Data, f.data), "the video's bytes")
		}
	}
}
