package takeout

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// clipUnits is where Google cuts a metadata JSON's name (before its "(n)"
// and ".json"): 46 UTF-16 code units of the media file's name, with
// ".supplemental-metadata" in newer Takeouts.
const clipUnits = 46

// supplemental is what newer Takeouts add to a JSON's name before ".json",
// clipped with the rest of the name.
const supplemental = "supplemental-metadata"

// splitName splits a media file's name into its stem, its numbered suffix
// ("(1)" at the end of the stem, the copy Google numbered) and its extension:
// "IMG(1).jpg" is ("IMG", "(1)", ".jpg").
func splitName(name string) (stem, num, ext string) {
	ext = path.Ext(name)
	if ext == name {
		ext = ""
	}
	stem = strings.TrimSuffix(name, ext)
	stem, num = cutNumber(stem)
	return stem, num, ext
}

// cutNumber splits a trailing "(digits)" off s.
func cutNumber(s string) (rest, num string) {
	if !strings.HasSuffix(s, ")") {
		return s, ""
	}
	open := strings.LastIndexByte(s, '(')
	if open < 0 || open == len(s)-2 {
		return s, ""
	}
	for _, c := range s[open+1 : len(s)-1] {
		if c < '0' || c > '9' {
			return s, ""
		}
	}
	return s[:open], s[open:]
}

// jsonName is a metadata JSON's name taken apart: the stem Google made from
// the media's name, and the numbered suffix it moved behind it.
type jsonName struct {
	stem, num string
}

// parseJSONName reads "IMG.jpg(1).json" as ("IMG.jpg", "(1)").
func parseJSONName(name string) jsonName {
	s := strings.TrimSuffix(name, path.Ext(name))
	stem, num := cutNumber(s)
	return jsonName{stem: stem, num: num}
}

// clips are the forms Google's 46-unit cut can give s: s itself when it is
// short enough, else its first 46 UTF-16 code units, with a surrogate pair
// the cut falls into dropped or replaced.
func clips(s string) []string {
	u := utf16.Encode([]rune(s))
	if len(u) <= clipUnits {
		return []string{s}
	}
	cut := u[:clipUnits]
	last := cut[len(cut)-1]
	if !utf16.IsSurrogate(rune(last)) || last >= 0xdc00 {
		return []string{string(utf16.Decode(cut))}
	}
	// The cut fell between the two halves of one character.
	head := string(utf16.Decode(cut[:len(cut)-1]))
	return []string{head, head + string(utf8.RuneError)}
}

// isClipped reports whether s is longer than Google's cut.
func isClipped(s string) bool { return units(s) > clipUnits }

// units is s's length in UTF-16 code units, as Google counts it.
func units(s string) int { return len(utf16.Encode([]rune(s))) }

// editedSuffixes are what Google adds to the name of an edited copy, by the
// account's language: "IMG_1234-edited.jpg" beside "IMG_1234.jpg". The copy
// has no JSON of its own and takes its original's.
var editedSuffixes = []string{
	"-edited",        // English
	"-bearbeitet",    // German
	"-modifié",       // French
	"-editado",       // Spanish, Portuguese
	"-modificato",    //nolint:misspell // Italian
	"-bewerkt",       // Dutch
	"-redigerad",     // Swedish
	"-redigeret",     // Danish
	"-redigert",      // Norwegian
	"-muokattu",      // Finnish
	"-edytowane",     // Polish
	"-upraveno",      // Czech
	"-upravené",      // Slovak
	"-szerkesztett",  // Hungarian
	"-editat",        // Romanian, Catalan
	"-düzenlendi",    // Turkish
	"-изменено",      // Russian
	"-змінено",       // Ukrainian
	"-επεξεργασμένο", // Greek
	"-編集済み",          // Japanese
	"-수정됨",           // Korean
	"-已修改",           // Chinese (simplified)
	"-已編輯",           // Chinese (traditional)
	"-diedit",        // Indonesian
	"-đã chỉnh sửa",  // Vietnamese
	"-แก้ไขแล้ว",     // Thai
	"-संपादित",       // Hindi
	"-נערך",          // Hebrew
	"-معدلة",         // Arabic
}

// editedOriginal returns the name of the original an edited copy was made
// from ("IMG-edited(1).jpg" → "IMG(1).jpg") and the suffix found, or false.
// Case is ignored in the suffix, as Google's own vary.
func editedOriginal(name string) (orig, suffix string, ok bool) {
	stem, num, ext := splitName(name)
	lower := strings.ToLower(stem)
	for _, s := range editedSuffixes {
		if strings.HasSuffix(lower, s) && len(stem) > len(s) {
			return stem[:len(stem)-len(s)] + num + ext, s, true
		}
	}
	return "", "", false
}

// cleanTitle makes a JSON's title a file name Ente can show: printable,
// valid UTF-8, no folders; "" when nothing is left.
func cleanTitle(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\':
			return '_'
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if s == "." || s == ".." || len(s) > 1024 {
		return ""
	}
	return s
}
