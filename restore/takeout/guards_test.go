package takeout

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A folder without album metadata is a year's when most of its photos were
// taken in the year its name says; any other is named as incomplete (an
// album whose metadata is in a part not given). Google's folder of
// archived photos is named after no year, and is no sign of one.
func TestAFolderWithoutAlbumMetadataThatIsNoYearsIsNamed(t *testing.T) {
	files := []tfile{
		f(gp+"Photos from 2020/a.jpg", jpeg(90)), f(gp+"Photos from 2020/a.jpg.json", photoJSON("a.jpg", t2020, nil)),
		f(gp+"Fotos von 2020/b.jpg", jpeg(91)), f(gp+"Fotos von 2020/b.jpg.json", photoJSON("b.jpg", t2020, nil)),
		f(gp+"Fotos von 2020/c.jpg", jpeg(92)), f(gp+"Fotos von 2020/c.jpg.json", photoJSON("c.jpg", t2021, nil)),
		f(gp+"Fotos von 2020/d.jpg", jpeg(93)), f(gp+"Fotos von 2020/d.jpg.json", photoJSON("d.jpg", t2020, nil)),
		f(gp+"Summer/e.jpg", jpeg(94)), f(gp+"Summer/e.jpg.json", photoJSON("e.jpg", t2020, nil)),
		f(gp+"Summer/f.jpg", jpeg(95)), f(gp+"Summer/f.jpg.json", photoJSON("f.jpg", t2021, nil)),
		f(gp+"Archive/g.jpg", jpeg(96)), f(gp+"Archive/g.jpg.json", photoJSON("g.jpg", t2020, map[string]any{"archived": true})),
	}
	tk := openTakeout(t, writeParts(t, t.TempDir(), [][]tfile{files}, "zip"), Options{})
	var incomplete []string
	for _, n := range tk.Report.Notes {
		if n.Kind == NoteIncomplete {
			incomplete = append(incomplete, n.Name)
		}
	}
	assert.Equal(t, []string{"Summer"}, incomplete, "half of Summer's photos are of one year: no majority, no year's folder")
}

// A photo's modification time is its JSON's when the JSON has one, else
// its file's.
func TestModificationTimeFromTheJSONElseTheFile(t *testing.T) {
	mod := time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC).Unix()
	files := []tfile{
		f(gp+"Photos from 2020/a.jpg", jpeg(97)),
		f(gp+"Photos from 2020/a.jpg.json", photoJSON("a.jpg", t2020, map[string]any{"photoLastModifiedTime": map[string]any{"timestamp": "1641092645"}})),
		f(gp+"Photos from 2020/b.jpg", jpeg(98)), f(gp+"Photos from 2020/b.jpg.json", photoJSON("b.jpg", t2020, nil)),
	}
	tk := openTakeout(t, writeParts(t, t.TempDir(), [][]tfile{files}, "zip"), Options{})
	got := map[string]int64{}
	for _, o := range tk.Originals {
		got[o.Title] = o.ModificationTime
	}
	assert.Equal(t, map[string]int64{"a.jpg": mod * 1_000_000, "b.jpg": time.Unix(1716667200, 0).UnixMicro()}, got)
}

// A live photo without any JSON is paired by the dates its image's Exif
// and its video's header carry, as Ente's uploader pairs it: within a day,
// one live photo; further apart, two files.
func TestALivePhotoWithoutJSONIsPairedByTheDatesOfItsBytes(t *testing.T) {
	shot := time.Date(2022, 8, 15, 18, 45, 0, 0, time.UTC)
	files := []tfile{
		f(gp+"Photos from 2022/PAIR.JPG", exifJPEG(99, "2022:08:15 18:45:00", "+00:00")),
		f(gp+"Photos from 2022/PAIR.MP4", movie(shot.Add(2*time.Second), 4000, false, 3)),
		f(gp+"Photos from 2022/APART.JPG", exifJPEG(100, "2022:08:15 18:45:00", "+00:00")),
		f(gp+"Photos from 2022/APART.MP4", movie(shot.Add(72*time.Hour), 4000, false, 4)),
	}
	for _, kind := range []string{"zip", "tgz", "dir"} {
		tk := openTakeout(t, writeParts(t, t.TempDir(), [][]tfile{files}, kind), Options{})
		types := map[string]int{}
		for _, o := range tk.Originals {
			types[o.Title] = o.FileType
		}
		assert.Equal(t, map[string]int{"PAIR.JPG": typeLive, "APART.JPG": typeImage, "APART.MP4": typeVideo}, types, kind)
	}
}

// A tgz whose photos the account has already is read once: their hashes
// from the first pass find them, and no second pass is needed.
func TestATgzTheAccountHasIsReadOnce(t *testing.T) {
	a := newAccount(t)
	files := []tfile{f(gp+"Photos from 2020/a.jpg", append(jpeg(101), noise(512<<10, 1)...)),
		f(gp+"Photos from 2020/a.jpg.json", photoJSON("a.jpg", t2020, nil))}
	a.u.AddAlbum("Camera").AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: files[0].Data})
	paths := writeParts(t, t.TempDir(), [][]tfile{files}, "tgz")
	fi, err := os.Stat(paths[0])
	require.NoError(t, err)
	c := &counted{}
	sum, err := a.importWith(paths, Options{open: c.open}, a.options())
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Present)
	assert.LessOrEqual(t, c.read(paths[0]), fi.Size(), "one pass")
}
