package sidecars

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Info is what a file's metadata files say about it.
type Info struct {
	// Title is the file's name in Ente (its edited name, if any); for a
	// live photo's part, the title with that part's extension.
	Title   string
	Caption string
	// Taken is when the photo was taken, in the zone its offset is shown in.
	Taken    time.Time
	Modified time.Time
	// Lat and Lon are nil when the file has no location (Ente's (0, 0)
	// means none too, and never reaches here).
	Lat, Lon *float64
	Favorite bool
	// Albums are the names of the albums the file is in, for keywords.
	Albums []string
}

// Style is the kind of JSON sidecar a backup keeps for each file.
type Style string

// Styles of JSON sidecars.
const (
	// Ente is `ente export`'s layout: <album>/.meta/<name>.json.
	Ente Style = "ente"
	// Takeout is Google Takeout's: <name>.supplemental-metadata.json beside
	// the file, and metadata.json in each album folder.
	Takeout Style = "takeout"
	// None keeps no JSON per file (only <album>/.meta/album_meta.json, by
	// which quak recognises its album folders).
	None Style = "none"
)

// ParseStyle reads a --sidecars value.
func ParseStyle(s string) (Style, error) {
	switch st := Style(strings.ToLower(strings.TrimSpace(s))); st {
	case Ente, Takeout, None:
		return st, nil
	}
	return "", fmt.Errorf("%q is not a sidecar style: use ente, takeout or none", s)
}

// XMPName is the name of a file's XMP sidecar: the convention darktable,
// digiKam and Immich read (IMG_0001.jpg.xmp).
func XMPName(name string) string { return name + ".xmp" }

// TakeoutAlbumFile is the album-level JSON of a Takeout folder.
const TakeoutAlbumFile = "metadata.json"

const (
	takeoutSuffix = "supplemental-metadata"
	maxName       = 255
)

// TakeoutName is the name of a file's Takeout JSON:
// NAME.EXT.supplemental-metadata.json. When that is longer than a file
// name may be, the suffix is cut as Google cuts it
// (NAME.EXT.supplemental-me.json, down to NAME.EXT..json), and for the
// longest names it is the older NAME.EXT.json.
func TakeoutName(name string) string {
	room := maxName - len(name) - len(".") - len(".json")
	switch {
	case room >= len(takeoutSuffix):
		return name + "." + takeoutSuffix + ".json"
	case room >= 0:
		return name + "." + takeoutSuffix[:room] + ".json"
	}
	return name + ".json"
}

// IsOwn reports whether name, in an album folder, is one of the files this
// package writes for a file named part: what quak verify does not count as
// a stranger's file.
func IsOwn(name string, parts map[string]bool) bool {
	if name == TakeoutAlbumFile {
		return true
	}
	if base, ok := strings.CutSuffix(name, ".xmp"); ok && parts[base] {
		return true
	}
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return false
	}
	if parts[base] {
		return TakeoutName(base) == name
	}
	if i := strings.LastIndex(base, "."); i > 0 && parts[base[:i]] {
		return TakeoutName(base[:i]) == name
	}
	return false
}

// PartTitle is the title a live photo's part is known by: the file's title
// with the part's own extension (IMG_0001.HEIC, IMG_0001.MOV). A single
// file keeps its title.
func PartTitle(title, part string, parts int) string {
	if parts < 2 {
		return title
	}
	return strings.TrimSuffix(title, filepath.Ext(title)) + filepath.Ext(part)
}
