package takeout

import (
	"path"
	"strings"
)

// Ente's file types.
const (
	typeImage = 0
	typeVideo = 1
	typeLive  = 2
)

// imageExts and videoExts are the files an import takes, by extension,
// as Google Photos stores them; anything else in the Takeout is named in
// the report and left out.
var (
	imageExts = set("jpg", "jpeg", "jpe", "jfif", "png", "gif", "webp", "heic", "heif", "avif", "bmp", "tif", "tiff",
		"ico", "jxl", "dng", "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "orf", "raf", "rw2", "pef",
		"srw", "x3f", "3fr", "erf", "kdc", "mrw", "raw", "rwl", "iiq", "psd", "svg")
	videoExts = set("mp4", "m4v", "mov", "qt", "3gp", "3g2", "avi", "mkv", "webm", "mts", "m2ts", "ts", "mpg",
		"mpeg", "mpe", "wmv", "asf", "flv", "mod", "tod", "vob", "ogv", "divx", "mxf")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// fileType is Ente's type of a file named name: image, video, or -1 when
// it is neither.
func fileType(name string) int {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	switch {
	case imageExts[ext]:
		return typeImage
	case videoExts[ext]:
		return typeVideo
	}
	return -1
}

// googleJunk are the files Google Photos puts in a Takeout beside the
// photos that are not photos' or albums' metadata: left out without a word
// beyond their count.
var googleJunk = set("print-subscriptions.json", "shared_album_comments.json", "user-generated-memory-titles.json",
	"archive_browser.html")

func isJunk(base string) bool { return googleJunk[strings.ToLower(base)] }
