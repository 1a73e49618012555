package takeout

import (
	"path"
	"strings"
)

// maxLivePart is the largest image or video Ente's uploader takes as half
// of a live photo.
const maxLivePart = 20 << 20

// liveDay is how far apart an image and a video may be dated and still be
// one live photo (Ente's rule: time zones differ between the two).
const liveDay = 24 * 3600 * 1_000_000

// liveName is a name as Ente compares the halves of a live photo: without
// its extension, and without the "_3" or "_HVEC" some tools add; an image
// also loses a video's extension that Google put before its own
// ("IMG_1.mp4.jpg" goes with "IMG_1.mp4").
func liveName(name string, isImage bool, videoExt string) string {
	stem := strings.TrimSuffix(name, path.Ext(name))
	switch {
	case strings.HasSuffix(stem, "_3"):
		return strings.TrimSuffix(stem, "_3")
	case strings.HasSuffix(stem, "_HVEC"), strings.HasSuffix(stem, "_hvec"):
		return stem[:len(stem)-5]
	case isImage && videoExt != "" && (strings.HasSuffix(stem, videoExt) || strings.HasSuffix(stem, strings.ToLower(videoExt))):
		return stem[:len(stem)-len(videoExt)]
	}
	return stem
}

// photo is one photo or video of a folder with its match, before live
// photos are paired.
type photo struct {
	e    *entry
	m    *match
	date *int64 // when it was taken: its JSON's, else its bytes', nil unknown
}

func (p *photo) meta() *photoMeta {
	if p.m == nil || p.m.doc == nil {
		return nil
	}
	return p.m.doc.photo
}

// pairLive pairs the images and videos of one folder into live photos by
// Ente's rules: the same name (as liveName makes it), each half at most
// 20 MiB, and dated within a day of each other, unless only one of the two
// has a JSON (Google gives the video none). An image or video with more
// than one partner is paired with none.
func pairLive(ps []*photo) (pairs [][2]*photo) {
	videos := map[string][]*photo{}
	exts := map[string]bool{}
	for _, p := range ps {
		if fileType(p.e.base) == typeVideo {
			k := liveName(p.e.base, false, "")
			videos[k] = append(videos[k], p)
			exts[path.Ext(p.e.base)] = true
		}
	}
	partners := map[*photo][]*photo{}
	for _, img := range ps {
		if fileType(img.e.base) != typeImage {
			continue
		}
		for _, v := range imageVideos(img, videos, exts) {
			if livePair(img, v) {
				partners[img] = append(partners[img], v)
				partners[v] = append(partners[v], img)
			}
		}
	}
	for _, img := range ps {
		vs := partners[img]
		if fileType(img.e.base) == typeImage && len(vs) == 1 && len(partners[vs[0]]) == 1 {
			pairs = append(pairs, [2]*photo{img, vs[0]})
		}
	}
	return pairs
}

// imageVideos are the videos whose live name an image's can be.
func imageVideos(img *photo, videos map[string][]*photo, exts map[string]bool) []*photo {
	var out []*photo
	seen := map[*photo]bool{}
	try := func(k, ext string) {
		for _, v := range videos[k] {
			if !seen[v] && (ext == "" || strings.EqualFold(path.Ext(v.e.base), ext)) {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	try(liveName(img.e.base, true, ""), "")
	for ext := range exts {
		if k := liveName(img.e.base, true, ext); k != liveName(img.e.base, true, "") {
			try(k, ext)
		}
	}
	return out
}

// livePair checks Ente's size and date rules for an image and a video of
// the same live name.
func livePair(img, v *photo) bool {
	if img.e.size > maxLivePart || v.e.size > maxLivePart {
		return false
	}
	if img.date != nil && v.date != nil {
		d := *img.date - *v.date
		if d < liveDay && d > -liveDay {
			return true
		}
	}
	return (img.meta() == nil) != (v.meta() == nil)
}
