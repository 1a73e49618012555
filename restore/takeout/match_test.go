package takeout

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// folderOf makes a folder's media and photo JSON from names: those ending
// in .json are JSON.
func folderOf(names ...string) ([]*entry, []*jsonDoc) {
	var media []*entry
	var docs []*jsonDoc
	for _, n := range names {
		e := &entry{name: n, base: n}
		if strings.HasSuffix(n, ".json") {
			docs = append(docs, &jsonDoc{e: e, name: parseJSONName(n), photo: &photoMeta{}})
		} else {
			media = append(media, e)
		}
	}
	return media, docs
}

// matched reports what a photo of the folder matched: "rule: json", or
// "ambiguous", or "".
func matched(media []*entry, docs []*jsonDoc, photo string) string {
	ms := matchFolder(media, docs)
	for e, m := range ms {
		if e.base != photo {
			continue
		}
		if m.doc == nil {
			return "ambiguous"
		}
		return m.rule + ": " + m.doc.e.base
	}
	return ""
}

func TestMatchTakesEachFormOfTheJSONName(t *testing.T) {
	long45 := strings.Repeat("a", 41) + ".jpg" // 45 characters
	long50 := strings.Repeat("b", 46) + ".jpg" // 50: cut
	emoji := "😀😃😄😁😆😅😂🤣🥲☺️😊😇🙂🙃😉😌😍🥰😘😗😙😚😋😛.jpg"   // 52 UTF-16 units
	cases := []struct {
		folder []string
		photo  string
		want   string
	}{
		{[]string{"IMG_1.jpg", "IMG_1.jpg.json"}, "IMG_1.jpg", RuleExact + ": IMG_1.jpg.json"},
		{[]string{"IMG_1(1).jpg", "IMG_1.jpg(1).json"}, "IMG_1(1).jpg", RuleNumbered + ": IMG_1.jpg(1).json"},
		{[]string{"IMG_1.jpg", "IMG_1.jpg.supplemental-metadata.json"}, "IMG_1.jpg", RuleSupplemental + ": IMG_1.jpg.supplemental-metadata.json"},
		{[]string{"IMG_1.jpg", "IMG_1.jpg.suppl.json"}, "IMG_1.jpg", RuleSupplemental + ": IMG_1.jpg.suppl.json"},
		{[]string{long45, long45 + "..json"}, long45, RuleSupplemental + ": " + long45 + "..json"},
		{[]string{"Scan35(1).jpg", "Scan35.jpg.supplemental-metadata(1).json"}, "Scan35(1).jpg", RuleSupplemental + ": Scan35.jpg.supplemental-metadata(1).json"},
		{[]string{"a (2).jpg", "a (2).jpg.supplemental-metadata.json"}, "a (2).jpg", RuleSupplemental + ": a (2).jpg.supplemental-metadata.json"},
		{[]string{"MVIMG_20191230_232926.jpg", "MVIMG_20191230_232926.jpg.supplemental-metadat.json"}, "MVIMG_20191230_232926.jpg",
			RuleSupplemental + ": MVIMG_20191230_232926.jpg.supplemental-metadat.json"},
		{[]string{"Screenshot_20231027_123303_Facebook(1).jpg", "Screenshot_20231027_123303_Facebook.jpg.supple(1).json"},
			"Screenshot_20231027_123303_Facebook(1).jpg", RuleSupplemental + ": Screenshot_20231027_123303_Facebook.jpg.supple(1).json"},
		{[]string{long50, strings.Repeat("b", 46) + ".json"}, long50, RuleClipped + ": " + strings.Repeat("b", 46) + ".json"},
		{[]string{"PXL_20230809_203449253.LONG_EXPOSURE-02.ORIGINA.jpg", "PXL_20230809_203449253.LONG_EXPOSURE-02.ORIGIN.json"},
			"PXL_20230809_203449253.LONG_EXPOSURE-02.ORIGINA.jpg", RuleClipped + ": PXL_20230809_203449253.LONG_EXPOSURE-02.ORIGIN.json"},
		{[]string{emoji, "😀😃😄😁😆😅😂🤣🥲☺️😊😇🙂🙃😉😌😍🥰😘😗😙😚😋.json"}, emoji, RuleClipped + ": 😀😃😄😁😆😅😂🤣🥲☺️😊😇🙂🙃😉😌😍🥰😘😗😙😚😋.json"},
		{[]string{"IMG_2-edited.jpg", "IMG_2.jpg", "IMG_2.jpg.json"}, "IMG_2-edited.jpg", RuleEdited + ": IMG_2.jpg.json"},
		{[]string{"IMG_2-bearbeitet.jpg", "IMG_2.jpg.supplemental-metadata.json"}, "IMG_2-bearbeitet.jpg", RuleEdited + ": IMG_2.jpg.supplemental-metadata.json"},
		{[]string{"PXL_1.PORTRAIT-modifié.jpg", "PXL_1.PORTRAIT.jpg.json"}, "PXL_1.PORTRAIT-modifié.jpg", RuleEdited + ": PXL_1.PORTRAIT.jpg.json"},
		{[]string{"IMG_3-EDITED.JPG", "IMG_3.JPG.json"}, "IMG_3-EDITED.JPG", RuleEdited + ": IMG_3.JPG.json"},
		// Not guessed.
		{[]string{"IMG_4.jpg", "IMG_5.jpg.json"}, "IMG_4.jpg", ""},
		{[]string{"DSC_0104(1).JPG", "DSC_0104.JPG.json"}, "DSC_0104(1).JPG", ""},
		{[]string{"DSC_0102(1).JPG", "DSC_0102.JPG(2).json"}, "DSC_0102(1).JPG", ""},
		{[]string{"DSC_0103.JPG", "DSC_0103.JPG(1).json"}, "DSC_0103.JPG", ""},
		{[]string{"IMG_6-retouché.jpg", "IMG_6.jpg.json"}, "IMG_6-retouché.jpg", ""},
	}
	for _, c := range cases {
		t.Run(c.photo, func(t *testing.T) {
			media, docs := folderOf(c.folder...)
			assert.Equal(t, c.want, matched(media, docs, c.photo))
		})
	}
}

func TestMatchGivesAJSONToOnePhotoOnly(t *testing.T) {
	// Both names cut to the same 46 characters: neither is guessed.
	a, b := strings.Repeat("c", 46)+"_A.jpg", strings.Repeat("c", 46)+"_B.jpg"
	media, docs := folderOf(a, b, strings.Repeat("c", 46)+".json")
	assert.Equal(t, "ambiguous", matched(media, docs, a))
	assert.Equal(t, "ambiguous", matched(media, docs, b))

	// The numbered copy would take the same cut JSON only by keeping its
	// number in place, a worse rule: the plain name wins, the copy gets none.
	p, q := "original_1d4caa6f-16c6-4c3d-901b-9387de10e528_P.jpg", "original_1d4caa6f-16c6-4c3d-901b-9387de10e528_P(1).jpg"
	media, docs = folderOf(p, q, "original_1d4caa6f-16c6-4c3d-901b-9387de10e528_.json")
	assert.Equal(t, RuleClipped+": original_1d4caa6f-16c6-4c3d-901b-9387de10e528_.json", matched(media, docs, p))
	assert.Equal(t, "", matched(media, docs, q))
}

func TestMatchAmbiguousWhenOneLevelHasTwoJSON(t *testing.T) {
	// "a (2).jpg" is either a second "a .jpg" (JSON numbered behind) or a
	// file of that name (JSON with the number in place): both are there.
	media, docs := folderOf("x (2).jpg", "x .jpg.supplemental-metadata(2).json", "x (2).jpg.supplemental-metadata.json", "y.jpg",
		"y.jpg.supplemental-metadata.json", "y.jpg.supplemental-metadat.json")
	assert.Equal(t, RuleSupplemental+": x .jpg.supplemental-metadata(2).json", matched(media, docs, "x (2).jpg"),
		"the moved number is the better form")
	assert.Equal(t, "ambiguous", matched(media, docs, "y.jpg"))
}

func TestMatchEditedCopySharesItsOriginalsJSON(t *testing.T) {
	media, docs := folderOf("IMG_7.jpg", "IMG_7-edited.jpg", "IMG_7.jpg.json")
	assert.Equal(t, RuleExact+": IMG_7.jpg.json", matched(media, docs, "IMG_7.jpg"))
	assert.Equal(t, RuleEdited+": IMG_7.jpg.json", matched(media, docs, "IMG_7-edited.jpg"))
	// An edited copy with its own JSON keeps it.
	media, docs = folderOf("IMG_8.jpg", "IMG_8-edited.jpg", "IMG_8.jpg.json", "IMG_8-edited.jpg.json")
	assert.Equal(t, RuleExact+": IMG_8-edited.jpg.json", matched(media, docs, "IMG_8-edited.jpg"))
}

func TestLookalikeOriginalNamesAnUnknownSuffix(t *testing.T) {
	names := map[string]bool{"IMG_6.jpg": true}
	assert.Equal(t, "IMG_6.jpg", lookalikeOriginal("IMG_6-retouché.jpg", names))
	assert.Equal(t, "", lookalikeOriginal("IMG_6-2.jpg", names), "digits are no edit suffix")
	assert.Equal(t, "", lookalikeOriginal("IMG_9-retouché.jpg", names), "no such original")
}

func TestSplitName(t *testing.T) {
	for _, c := range [][4]string{
		{"IMG(1).jpg", "IMG", "(1)", ".jpg"},
		{"IMG.jpg", "IMG", "", ".jpg"},
		{"a (12).HEIC", "a ", "(12)", ".HEIC"},
		{"x().jpg", "x()", "", ".jpg"},
		{"x(a).jpg", "x(a)", "", ".jpg"},
		{"noext", "noext", "", ""},
		{".hidden", ".hidden", "", ""},
	} {
		stem, num, ext := splitName(c[0])
		assert.Equal(t, c[1:], []string{stem, num, ext}, c[0])
	}
}

func TestClipsCutAtFortySixUTF16Units(t *testing.T) {
	assert.Equal(t, []string{"short"}, clips("short"))
	assert.Equal(t, []string{strings.Repeat("a", 46)}, clips(strings.Repeat("a", 47)))
	// 45 units, then a character of two units the cut falls into.
	s := strings.Repeat("a", 45) + "😀b"
	assert.Equal(t, []string{strings.Repeat("a", 45), strings.Repeat("a", 45) + "\uFFFD"}, clips(s))
	assert.False(t, isClipped(strings.Repeat("a", 46)))
	assert.True(t, isClipped(strings.Repeat("a", 46)+"😀"))
}
