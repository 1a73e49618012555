package takeout

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
)

// jsonDoc is a metadata JSON read from a part: a photo's or an album's.
type jsonDoc struct {
	e     *entry
	name  jsonName
	photo *photoMeta
	album *albumMeta
	used  bool // matched to a photo
}

// scanned is what the listing of one part found: its media, its metadata
// JSON, and the product folder (Google Photos, Drive…) of each.
type scanned struct {
	mu       sync.Mutex
	media    []*entry
	docs     []*jsonDoc
	products map[*entry]string
	photoish map[string]bool // products with Google Photos metadata
	notes    []Note
}

func newScanned() *scanned {
	return &scanned{products: map[*entry]string{}, photoish: map[string]bool{}}
}

// add sorts one entry of a part by its name: a JSON is read (read gives its
// bytes, at most maxJSON), a photo or video is kept for matching, anything
// else is counted out.
func (s *scanned) add(e *entry, read func() ([]byte, error)) {
	dir, base, product, ok := takeoutName(e.name)
	r := e.p.report
	if !ok {
		s.skip(e, SkipUnsafe, errUnsafeName.Error())
		return
	}
	e.dir, e.base = dir, base
	switch {
	case isJunk(base):
		s.count(r, SkipJunk)
	case strings.EqualFold(path.Ext(base), ".json"):
		s.addJSON(e, product, read)
	case fileType(base) >= 0 && e.size == 0:
		s.skip(e, SkipEmpty, "")
	case fileType(base) >= 0:
		s.mu.Lock()
		s.media = append(s.media, e)
		s.products[e] = product
		s.mu.Unlock()
	default:
		s.skip(e, SkipNotMedia, "")
	}
}

func (s *scanned) addJSON(e *entry, product string, read func() ([]byte, error)) {
	if e.size > maxJSON {
		s.skip(e, SkipBigJSON, fmt.Sprintf("%d bytes", e.size))
		return
	}
	b, err := read()
	if err != nil {
		s.skip(e, SkipUnreadable, err.Error())
		return
	}
	photo, album, err := parseMeta(b)
	if err != nil {
		s.skip(e, SkipBadJSON, "")
		return
	}
	d := &jsonDoc{e: e, name: parseJSONName(e.base), photo: photo, album: album}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.p.report.JSON++
	s.docs = append(s.docs, d)
	s.products[e] = product
	s.photoish[product] = true
}

// skip counts an entry left out and names it.
func (s *scanned) skip(e *entry, why, detail string) {
	s.count(e.p.report, why)
	if why == SkipJunk || why == SkipOtherApp {
		return
	}
	reason := why
	if detail != "" {
		reason += ": " + detail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, Note{Kind: NoteSkipped, Part: e.p.path, Name: e.name, Reason: reason})
}

func (s *scanned) count(r *PartReport, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Skipped[why]++
}

// readCapped reads r to its end, refusing more than maxJSON bytes.
func readCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxJSON+1))
	if err == nil && len(b) > maxJSON {
		err = errors.New("larger than its header says")
	}
	return b, err
}

// keepPhotos drops the media and JSON of products that are not Google
// Photos (a Takeout of Drive and Photos together): a product is Photos' when
// it holds a photo's or album's JSON, or, when none does (their parts all
// missing), every product with photos is taken.
func (s *scanned) keepPhotos() {
	if len(s.photoish) == 0 {
		return
	}
	keep := s.media[:0]
	for _, e := range s.media {
		if p := s.products[e]; p == "" || s.photoish[p] {
			keep = append(keep, e)
		} else {
			e.p.report.Skipped[SkipOtherApp]++
		}
	}
	s.media = keep
}
