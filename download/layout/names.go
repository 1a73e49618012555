// Package layout turns names from the server, which a shared album's owner
// controls, into safe file and folder names, keeps them unique within a
// folder, and checks that every path stays inside the backup folder.
package layout

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxName is the longest file name most file systems take, in bytes.
const MaxName = 255

// MaxFile is the longest name quak gives a file in an album folder: its
// sidecar in .meta/ adds ".json" and must fit MaxName too.
const MaxFile = MaxName - len(".json")

// Sanitize makes name safe as one path element on Linux, macOS and Windows:
// path separators, control characters, NUL and the characters Windows
// forbids become "_"; "." and ".." and empty names become fallback; trailing
// dots and spaces go; Windows' reserved device names get a "_" prefix; and
// names longer than MaxName bytes are cut, keeping the extension and whole
// UTF-8 characters.
func Sanitize(name, fallback string) string {
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "_")
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '/' || r == '\\' || r == 0 || unicode.IsControl(r) || bidi(r) || strings.ContainsRune(`<>:"|?*`, r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.TrimRight(strings.TrimSpace(b.String()), ". ")
	if s == "" || s == "." || s == ".." {
		s = fallback
	}
	if reserved(s) {
		s = "_" + s
	}
	return truncate(s, MaxName)
}

// bidi reports the invisible direction controls that make "photo‮gpj.exe"
// read as "photoexe.jpg": a shared album's owner could spoof extensions.
func bidi(r rune) bool {
	return r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// reserved reports Windows device names, alone or with an extension.
func reserved(s string) bool {
	stem, _, _ := strings.Cut(strings.ToUpper(s), ".")
	stem = strings.TrimRight(stem, " ")
	switch stem {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(stem) == 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) {
		return stem[3] >= '1' && stem[3] <= '9'
	}
	return false
}

// truncate cuts s to at most max bytes, keeping a short extension and never
// splitting a UTF-8 character.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	ext := filepath.Ext(s)
	if len(ext) > 16 {
		ext = ""
	}
	stem := s[:len(s)-len(ext)]
	cut := max - len(ext)
	for cut > 0 && !utf8.RuneStart(stem[cut]) {
		cut--
	}
	return stem[:cut] + ext
}

// SanitizeFolder is Sanitize for an album's folder, made visible too:
// leading dots go, since file managers and ls hide a dot-folder and a
// user would think the album was not backed up (".hidden" is Ente's own
// hidden album; "../x" would be ".._x"). A name of dots alone is fallback.
func SanitizeFolder(name, fallback string) string {
	s := strings.TrimLeft(Sanitize(name, fallback), ".")
	switch {
	case s == "":
		return fallback
	case reserved(s):
		return "_" + s
	}
	return s
}

// SanitizeFile is Sanitize for a file in an album folder: at most MaxFile
// bytes, so that its sidecar's name fits too.
func SanitizeFile(name, fallback string) string {
	return truncate(Sanitize(name, fallback), MaxFile)
}

// Namer hands out names in one folder that are unique regardless of case,
// as "stem.ext", "stem_1.ext", "stem_2.ext" (the Ente CLI's scheme), never
// longer than its limit. Names already taken (from earlier runs) are
// registered with Take.
type Namer struct {
	taken map[string]bool
	max   int
}

// NewNamer returns a Namer of names up to MaxName bytes with nothing taken.
func NewNamer() *Namer { return &Namer{taken: map[string]bool{}, max: MaxName} }

// NewFileNamer returns a Namer of names up to MaxFile bytes, for files that
// get sidecars.
func NewFileNamer() *Namer { return &Namer{taken: map[string]bool{}, max: MaxFile} }

// Take marks name as used.
func (n *Namer) Take(name string) { n.taken[strings.ToLower(name)] = true }

// Taken reports whether name is used.
func (n *Namer) Taken(name string) bool { return n.taken[strings.ToLower(name)] }

// Release frees name (after a rename or removal).
func (n *Namer) Release(name string) { delete(n.taken, strings.ToLower(name)) }

// Unique returns the first free name for want (already sanitized) and takes it.
func (n *Namer) Unique(want string) string {
	return n.UniqueFree(want, func(string) bool { return true })
}

// UniqueFree is Unique that also skips names for which free is false (say,
// names of files on disk that quak does not own).
func (n *Namer) UniqueFree(want string, free func(string) bool) string {
	want = truncate(want, n.max)
	ext := filepath.Ext(want)
	if len(ext) > 16 {
		ext = ""
	}
	stem := strings.TrimSuffix(want, ext)
	name := want
	for i := 1; n.taken[strings.ToLower(name)] || !free(name); i++ {
		suffix := fmt.Sprintf("_%d", i)
		name = truncate(stem, n.max-len(ext)-len(suffix)) + suffix + ext
	}
	n.Take(name)
	return name
}

// ErrOutside reports a path that would leave the backup folder.
var ErrOutside = errors.New("path leaves the backup folder")

// Join joins sanitized elements under root and checks the result is inside.
func Join(root string, elems ...string) (string, error) {
	p := filepath.Join(append([]string{root}, elems...)...)
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %q", ErrOutside, filepath.Join(elems...))
	}
	return p, nil
}
