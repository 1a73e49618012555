package takeout

import "sort"

// How a photo found its metadata JSON (Report's Matched keys).
const (
	RuleExact        = "name.json"             // IMG.jpg → IMG.jpg.json
	RuleNumbered     = "numbered"              // IMG(1).jpg → IMG.jpg(1).json
	RuleSupplemental = "supplemental-metadata" // IMG.jpg → IMG.jpg.supplemental-metadata.json, or a clipped form
	RuleClipped      = "name cut at 46"        // a long name → its first 46 characters .json
	RuleEdited       = "edited copy"           // IMG-edited.jpg → IMG.jpg's JSON
	RuleLiveVideo    = "live photo's image"    // a live photo's video: its image's JSON
	RuleNone         = "no JSON"               // none: dated from the file itself
)

// Why a file of a Takeout is left out (Report's Skipped keys).
const (
	SkipTrashed    = "in Google's trash"
	SkipPartner    = "shared by a partner (see --include-partner)"
	SkipNotMedia   = "not a photo or video"
	SkipJunk       = "Google's non-photo files"
	SkipOtherApp   = "another Google product's"
	SkipUnsafe     = "unsafe name"
	SkipLink       = "a link, not a file"
	SkipBigJSON    = "JSON too large to be Google's"
	SkipBadJSON    = "JSON that is not Google Photos'"
	SkipDuplicate  = "the same file twice in one folder"
	SkipUnreadable = "unreadable"
	SkipEmpty      = "an empty file"
)

// PartReport is what an import found in one part.
type PartReport struct {
	Path    string         `json:"path"`
	Kind    string         `json:"kind"`
	Damaged string         `json:"damaged,omitempty"` // why the part could not be read to its end
	Media   int            `json:"media"`             // photos and videos in the part
	JSON    int            `json:"json"`              // metadata JSON files read
	Matched map[string]int `json:"matched"`           // its photos by how their JSON was found
	// Unmatched are its photos with no JSON found; Ambiguous those with
	// more than one candidate (neither is guessed: both are dated from the
	// file, and named in Notes).
	Unmatched int            `json:"unmatched"`
	Ambiguous int            `json:"ambiguous"`
	Skipped   map[string]int `json:"skipped"` // files left out, by why
}

// AlbumReport is an album found in the Takeout.
type AlbumReport struct {
	Name     string `json:"name"`
	Folder   string `json:"folder"`
	Files    int    `json:"files"` // originals in it that are imported
	Untitled bool   `json:"untitled,omitempty"`
}

// Note is one file or folder the report names, and why.
type Note struct {
	Kind   string `json:"kind"` // NoteUnmatched, NoteAmbiguous, NoteSkipped, NoteIncomplete, NoteOrphanJSON
	Part   string `json:"part,omitempty"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Note kinds.
const (
	NoteUnmatched  = "unmatched"
	NoteAmbiguous  = "ambiguous"
	NoteSkipped    = "skipped"
	NoteIncomplete = "incomplete" // a folder that looks as if a part is missing
	NoteOrphanJSON = "json-without-photo"
	NoteEmptyAlbum = "empty-album"
)

// Report is what the reading of a Takeout found, before anything is sent:
// per part, the photos and how each found its metadata, what is left out
// and why, the albums; Notes name files one by one (the first maxNotes of
// each kind, with Dropped counting the rest).
type Report struct {
	Parts     []*PartReport  `json:"parts"`
	Albums    []AlbumReport  `json:"albums"`
	Originals int            `json:"originals"` // distinct files to import
	Live      int            `json:"livePhotos"`
	Notes     []Note         `json:"notes"`
	Dropped   map[string]int `json:"dropped,omitempty"`
}

// maxNotes caps the notes of one kind a report names.
const maxNotes = 1000

func newPartReport(p *part) *PartReport {
	return &PartReport{Path: p.path, Kind: p.kind.String(), Matched: map[string]int{}, Skipped: map[string]int{}}
}

// note names a file in the report, among the first maxNotes of its kind.
func (r *Report) note(n Note, counts map[string]int) {
	if counts[n.Kind] >= maxNotes {
		if r.Dropped == nil {
			r.Dropped = map[string]int{}
		}
		r.Dropped[n.Kind]++
		return
	}
	counts[n.Kind]++
	r.Notes = append(r.Notes, n)
}

// sortNotes orders the notes by kind, part and name, so that a report
// reads the same every run.
func (r *Report) sortNotes() {
	sort.SliceStable(r.Notes, func(i, j int) bool {
		a, b := r.Notes[i], r.Notes[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Part != b.Part {
			return a.Part < b.Part
		}
		return a.Name < b.Name
	})
	sort.Slice(r.Albums, func(i, j int) bool { return r.Albums[i].Name < r.Albums[j].Name })
}
