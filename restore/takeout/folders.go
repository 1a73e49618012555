package takeout

import (
	"fmt"
	"sort"
	"strings"
)

// folder is one folder of the Takeout, joined across parts: an album's
// (with its album JSON) or a year's.
type folder struct {
	dir    string
	media  []*entry
	docs   []*jsonDoc // photos' JSON
	albums []*jsonDoc // album JSON: one, in a whole Takeout
}

// folders joins the parts' entries by folder. A file found twice in one
// folder (the same part given twice) is taken once.
func (t *Takeout) folders(s *scanned) []*folder {
	byDir := map[string]*folder{}
	get := func(dir string) *folder {
		f := byDir[dir]
		if f == nil {
			f = &folder{dir: dir}
			byDir[dir] = f
		}
		return f
	}
	sort.SliceStable(s.media, func(i, j int) bool { return before(s.media[i], s.media[j]) })
	seen := map[string]*entry{}
	for _, e := range s.media {
		k := e.dir + "/" + e.base
		if o := seen[k]; o != nil && o.size == e.size && (!o.hasCRC || !e.hasCRC || o.crc == e.crc) {
			e.p.report.Skipped[SkipDuplicate]++
			t.note(Note{Kind: NoteSkipped, Part: e.p.path, Name: e.name, Reason: fmt.Sprintf("%s: also in %s", SkipDuplicate, o.p.path)})
			continue
		}
		seen[k] = e
		e.p.report.Media++
		f := get(e.dir)
		f.media = append(f.media, e)
	}
	sort.SliceStable(s.docs, func(i, j int) bool { return before(s.docs[i].e, s.docs[j].e) })
	seenDoc := map[string]bool{}
	for _, d := range s.docs {
		k := d.e.dir + "/" + d.e.base
		if seenDoc[k] {
			continue
		}
		seenDoc[k] = true
		f := get(d.e.dir)
		if d.album != nil {
			f.albums = append(f.albums, d)
		} else {
			f.docs = append(f.docs, d)
		}
	}
	out := make([]*folder, 0, len(byDir))
	for _, f := range byDir {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// before orders entries by part (as given), then by place in the part.
func before(a, b *entry) bool {
	if a.p != b.p {
		return a.p.index < b.p.index
	}
	return a.pos < b.pos
}

// albumTitle is a folder's album name, or "" when the folder is no album
// (a year's, or one whose album JSON is in a part not given); untitled
// reports an album whose JSON has no title, named after its folder.
func (f *folder) albumTitle() (title string, untitled, ok bool) {
	if len(f.albums) == 0 {
		return "", false, false
	}
	title = f.albums[0].album.title
	if title == "" {
		base := f.dir[strings.LastIndexByte(f.dir, '/')+1:]
		return cleanAlbumName(base), true, true
	}
	return title, false, true
}
