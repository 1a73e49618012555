package takeout

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The report of the trap Takeout, in one zip: each photo counted by how it
// found its JSON, what is left out and why, the albums, and the files and
// folders it names.
func TestTheReportCountsAndNamesWhatTheTakeoutHolds(t *testing.T) {
	files := append(trapTakeout(), f(gp+"Photos from 2023/dup.jpg", jpeg(70)),
		f(gp+"Photos from 2023/dup.jpg.supplemental-metadata.json", photoJSON("dup.jpg", t2022, nil)),
		f(gp+"Photos from 2023/dup.jpg.supplemental-metadat.json", photoJSON("dup.jpg", t2022, nil)))
	paths := writeParts(t, t.TempDir(), [][]tfile{files}, "zip")
	tk := openTakeout(t, paths, Options{})
	r := tk.Report.Parts[0]
	assert.Equal(t, "zip", r.Kind)
	assert.Equal(t, 24, r.Media, "every photo and video, each copy")
	assert.Equal(t, map[string]int{RuleExact: 8, RuleNumbered: 2, RuleSupplemental: 4, RuleClipped: 1, RuleEdited: 2, RuleLiveVideo: 1}, r.Matched)
	assert.Equal(t, 3, r.Unmatched, "IMG-20230115-WA0001.jpg, exif.jpg, clip.mp4")
	assert.Equal(t, 1, r.Ambiguous, "dup.jpg")
	assert.Equal(t, map[string]int{SkipTrashed: 1, SkipPartner: 1, SkipJunk: 4, SkipBadJSON: 1}, r.Skipped)
	assert.Equal(t, 25, r.JSON, "photos' and albums' JSON")
	assert.Equal(t, []AlbumReport{{Name: "Beste Bilder", Folder: "Beste Bilder", Files: 1}, {Name: "Famille", Folder: "Famille", Files: 1},
		{Name: "Trip to Lisbon", Folder: "Trip to Lisbon", Files: 1}, {Name: "Untitled(1)", Folder: "Untitled(1)", Files: 1, Untitled: true}},
		tk.Report.Albums)
	kinds := map[string][]string{}
	for _, n := range tk.Report.Notes {
		kinds[n.Kind] = append(kinds[n.Kind], n.Name)
	}
	assert.Equal(t, []string{gp + "Photos from 2023/dup.jpg"}, kinds[NoteAmbiguous])
	assert.Equal(t, []string{"Empty album"}, kinds[NoteEmptyAlbum])
	assert.Equal(t, []string{gp + "Photos from 2019/missing.jpg.json"}, kinds[NoteOrphanJSON])
	assert.Equal(t, []string{"Photos from 2019"}, kinds[NoteIncomplete])
	assert.Len(t, kinds[NoteUnmatched], 3)
	assert.ElementsMatch(t, []string{gp + "Trash/IMG_0008.jpg", gp + "Photos from 2022/IMG_0009.jpg", gp + "Photos from 2023/random.json"},
		kinds[NoteSkipped])
}
