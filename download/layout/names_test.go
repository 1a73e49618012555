package layout

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"IMG_0001.jpg":        "IMG_0001.jpg",
		"../../etc/passwd":    ".._.._etc_passwd",
		"..":                  "untitled",
		".":                   "untitled",
		"":                    "untitled",
		"   ":                 "untitled",
		"a/b\\c":              "a_b_c",
		"nul\x00byte":         "nul_byte",
		"bell\a\ttab\nline":   "bell__tab_line",
		"con":                 "_con",
		"CON.txt":             "_CON.txt",
		"com1.jpg":            "_com1.jpg",
		"LPT9":                "_LPT9",
		"com0.jpg":            "com0.jpg",
		"console.jpg":         "console.jpg",
		"trailing dots...":    "trailing dots",
		"trailing space . ":   "trailing space",
		`what?<is>:this*"|`:   "what__is__this___",
		"Fête d'été.HEIC":     "Fête d'été.HEIC",
		".hidden":             ".hidden",
		"\xff\xfeinvalid.jpg": "_invalid.jpg",
	}
	for in, want := range cases {
		assert.Equal(t, want, Sanitize(in, "untitled"), "%q", in)
	}
}

func TestSanitizeKeepsLongNamesUnder255BytesWithTheirExtension(t *testing.T) {
	long := strings.Repeat("é", 300) + ".jpeg"
	got := Sanitize(long, "x")
	assert.LessOrEqual(t, len(got), MaxName)
	assert.True(t, strings.HasSuffix(got, ".jpeg"))
	assert.True(t, utf8.ValidString(got))
}

func TestNamerIsCaseInsensitiveAndStable(t *testing.T) {
	n := NewNamer()
	assert.Equal(t, "IMG.jpg", n.Unique("IMG.jpg"))
	assert.Equal(t, "img_1.JPG", n.Unique("img.JPG"))
	assert.Equal(t, "IMG_2.jpg", n.Unique("IMG.jpg"))
	assert.True(t, n.Taken("IMG_1.jpg"), "taken, whatever the case")
	n.Release("img_1.JPG")
	assert.False(t, n.Taken("img_1.jpg"))
	assert.Equal(t, "img_1.jpg", n.Unique("img.jpg"))

	// A later run that registers the same names first hands out the same ones.
	m := NewNamer()
	for _, taken := range []string{"IMG.jpg", "img_1.jpg", "IMG_2.jpg"} {
		m.Take(taken)
	}
	assert.Equal(t, "IMG_3.jpg", m.Unique("IMG.jpg"))
}

func TestNamerKeepsSuffixedNamesShort(t *testing.T) {
	n := NewNamer()
	long := Sanitize(strings.Repeat("a", 300)+".jpg", "x")
	n.Unique(long)
	second := n.Unique(long)
	assert.LessOrEqual(t, len(second), MaxName)
	assert.True(t, strings.HasSuffix(second, "_1.jpg"))
}

func TestJoinStaysInside(t *testing.T) {
	root := t.TempDir()
	p, err := Join(root, "Album", "x.jpg")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "Album", "x.jpg"), p)
	for _, bad := range [][]string{{".."}, {"..", "x"}, {"a", "..", "..", "x"}} {
		_, err := Join(root, bad...)
		assert.ErrorIs(t, err, ErrOutside, "%v", bad)
	}
	// Sanitized names can never escape.
	for _, hostile := range []string{"..", "../x", "/abs", "a/../../b", `..\..\x`} {
		_, err := Join(root, Sanitize(hostile, "x"), Sanitize(hostile, "y"))
		assert.NoError(t, err, "%q", hostile)
	}
}

func TestDirectionControlsAreReplaced(t *testing.T) {
	for _, name := range []string{"photo\u202egpj.exe", "a\u2066b.jpg", "x\u200fy.jpg"} {
		got := Sanitize(name, "file")
		for _, r := range got {
			if bidi(r) {
				t.Fatalf("%q kept a direction control: %q", name, got)
			}
		}
	}
}

func TestSanitizeFolderShowsWhatDotsWouldHide(t *testing.T) {
	for in, want := range map[string]string{
		".hidden":   "hidden",
		"../escape": "_escape",
		"...":       "Album 7",
		".con":      "_con",
		"Trip.2024": "Trip.2024",
		"Trip":      "Trip",
	} {
		assert.Equal(t, want, SanitizeFolder(in, "Album 7"), in)
	}
}
