package takeout

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/restore"
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

// A photo of Google's Locked Folder goes into Ente's hidden album only,
// whatever albums and favourites also hold it; the report counts it there.
func TestImportPutsLockedFolderPhotosInTheHiddenAlbumOnly(t *testing.T) {
	locked := jpeg(40)
	files := []tfile{
		f(gp+"Photos from 2021/IMG_0040.jpg", locked),
		f(gp+"Photos from 2021/IMG_0040.jpg.json", photoJSON("IMG_0040.jpg", t2021, map[string]any{"inLockedFolder": true, "favorited": true})),
		f(gp+"Trip/IMG_0040.jpg", locked),
		f(gp+"Trip/IMG_0040.jpg.json", photoJSON("IMG_0040.jpg", t2021, nil)),
		f(gp+"Trip/IMG_0041.jpg", jpeg(41)),
		f(gp+"Trip/IMG_0041.jpg.json", photoJSON("IMG_0041.jpg", t2021+60, map[string]any{"inLockedFolder": "yes"})),
		f(gp+"Trip/metadata.json", albumJSON("Trip")),
		f(gp+"Locked Folder/IMG_0042.jpg", jpeg(42)),
		f(gp+"Locked Folder/IMG_0042.jpg.json", photoJSON("IMG_0042.jpg", t2021+120, map[string]any{"inLockedFolder": true})),
	}
	tk := openTakeout(t, writeParts(t, t.TempDir(), [][]tfile{files}, "zip"), Options{})
	var names []string
	for _, r := range tk.Report.Albums {
		names = append(names, fmt.Sprintf("%s (%d)", r.Name, r.Files))
	}
	sort.Strings(names)
	assert.Equal(t, []string{"Hidden (from Google's Locked Folder) (2)", "Trip (1)"}, names)
	for _, n := range tk.Report.Notes {
		assert.NotEqual(t, NoteIncomplete, n.Kind, "Google's folder of locked photos is no sign of a missing part: %v", n)
	}

	a := newAccount(t)
	paths := writeParts(t, t.TempDir(), [][]tfile{files}, "zip")
	sum := a.mustImport(paths)
	assert.Equal(t, 3, sum.Uploaded)
	got := map[string]string{}
	for _, f := range a.files() {
		got[f.meta.Title] = strings.Join(f.albums, ", ")
	}
	assert.Equal(t, map[string]string{"IMG_0040.jpg": ".hidden", "IMG_0041.jpg": "Trip", "IMG_0042.jpg": ".hidden"}, got,
		"\"inLockedFolder\" is true or nothing")
	cols, err := a.client().Collections(t.Context(), 0)
	require.NoError(t, err)
	hidden := 0
	for i := range cols {
		al, err := catalog.OpenAlbum(&cols[i], a.keys())
		require.NoError(t, err)
		if al.Name == restore.HiddenAlbum {
			hidden++
			assert.Equal(t, 2, al.Visibility)
		}
	}
	assert.Equal(t, 1, hidden)
	again := a.mustImport(paths)
	assert.Equal(t, 0, again.Uploaded)
	assert.Equal(t, 0, again.AlbumsCreated)
}
