package takeout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A part given twice (or a zip and the folder it was unpacked into) adds
// nothing: each file is taken once, its JSON is not made ambiguous, and
// the second copy is counted as such.
func TestAPartGivenTwiceAddsNothing(t *testing.T) {
	files := trapTakeout()
	paths := writeParts(t, t.TempDir(), [][]tfile{files}, "zip")
	again := writeParts(t, t.TempDir(), [][]tfile{files}, "dir")
	tk := openTakeout(t, append(paths, again...), Options{})
	drain(t, tk)
	assert.Equal(t, wantViews(), views(tk))
	assert.Zero(t, tk.Report.Parts[0].Ambiguous+tk.Report.Parts[1].Ambiguous)
	assert.Equal(t, 23, tk.Report.Parts[1].Skipped[SkipDuplicate], "each of the second part's 23 photos and videos")
	assert.Zero(t, tk.Report.Parts[1].Media)
}

// Two different files of one name in one folder (two Takeouts given
// together) are two photos; neither takes the JSON they could share.
func TestTwoFilesOfOneNameInOneFolderAreBothKept(t *testing.T) {
	a := []tfile{f(gp+"Photos from 2020/IMG_1.jpg", jpeg(80)), f(gp+"Photos from 2020/IMG_1.jpg.json", photoJSON("IMG_1.jpg", t2020, nil))}
	b := []tfile{f(gp+"Photos from 2020/IMG_1.jpg", jpeg(81))}
	tk := openTakeout(t, writeParts(t, t.TempDir(), [][]tfile{a, b}, "zip"), Options{})
	require.Len(t, tk.Originals, 2)
	assert.Equal(t, 2, tk.Report.Parts[0].Ambiguous+tk.Report.Parts[1].Ambiguous)
	assert.Zero(t, tk.Report.Parts[1].Skipped[SkipDuplicate])
}

// A photo whose copy in one folder has its JSON and whose copy in another
// (listed first) has none is described by its JSON, wherever the folders
// sort.
func TestACopyWithItsJSONDescribesThePhoto(t *testing.T) {
	photo := jpeg(82)
	files := []tfile{
		f(gp+"A Trip/IMG_9.jpg", photo), f(gp+"A Trip/metadata.json", albumJSON("A Trip")),
		f(gp+"Photos from 2020/IMG_9.jpg", photo),
		f(gp+"Photos from 2020/IMG_9.jpg.json", photoJSON("IMG_9.jpg", t2020, map[string]any{"description": "the real date"})),
		f(gp+"Z Later/IMG_9.jpg", photo), f(gp+"Z Later/metadata.json", albumJSON("Z Later")),
	}
	for _, kind := range []string{"zip", "tgz"} {
		tk := openTakeout(t, writeParts(t, t.TempDir(), [][]tfile{files}, kind), Options{})
		drain(t, tk)
		require.Len(t, tk.Originals, 1, kind)
		v := viewOf(tk, tk.Originals[0])
		assert.Equal(t, "the real date", v.caption, kind)
		assert.Equal(t, unix(t2020).UTC().Format("2006-01-02T15:04:05Z07:00"), v.created, kind)
		assert.Equal(t, "A Trip, Z Later", v.albums, kind)
	}
}
