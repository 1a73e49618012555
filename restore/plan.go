package restore

import (
	"path/filepath"
	"sort"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// original is one file of the backup to restore: its record, the paths of
// its parts (an image and a video for a live photo), the hashes they were
// saved with, and the source albums that hold it.
type original struct {
	rec    *state.File
	parts  []string
	hashes []string
	albums []int64 // source album ids, ascending (an import's: its source's order)
	// An import's original: what its source says, and its parts' bytes
	// once read into memory (importitem.go).
	src *Original
	mem [][]byte
}

// sourceAlbum is an album of the backup as the target gets it.
type sourceAlbum struct {
	id         int64
	name       string
	typ        string // album, folder, favorites or uncategorized
	visibility int    // 0 visible, 1 archived, 2 hidden
}

// plan is what the backup holds to restore.
type plan struct {
	files   []*original
	albums  map[int64]*sourceAlbum
	leftOut int
	// unread are an export's file ids with copies whose JSON is missing:
	// the albums of those copies.
	unread map[int64][]int64
	// An export's files that cannot be restored, each by the path of what
	// describes it (the first maxPlanFailures; failed counts them all);
	// dir is the export's folder.
	failures []Failure
	failed   int
	dir      string
	// filtered counts the originals the filters left out; shared names
	// the albums left out as others' (source id → name); unsaved counts
	// the backup's files it listed but never saved.
	filtered int
	shared   map[int64]string
	unsaved  int
}

// readPlan reads the backup's state: every saved file with at least one
// album copy still on the server at the last backup, in an album sel
// chooses, and the albums that hold them. Shared albums, when taken,
// come back as the target's own. Errors: *filter.NoMatchError for an
// --albums pattern that matches no album of the backup.
func readPlan(f *folder.Folder, sel selection) (*plan, error) {
	st, err := f.OpenStateReadOnly()
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	cols, err := st.Collections()
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for id, c := range cols {
		if !c.Deleted {
			names[id] = c.Name
		}
	}
	if err := sel.check(names); err != nil {
		return nil, err
	}
	p := &plan{albums: map[int64]*sourceAlbum{}, shared: map[int64]string{}}
	err = st.Files(func(sf *state.File) error {
		switch o, chosen := p.take(f, sf, cols, sel); {
		case o != nil:
			p.files = append(p.files, o)
		case !chosen:
			p.filtered++
		default:
			p.leftOut++
			if sf.Status == state.Failed {
				p.unsaved++
			}
		}
		return nil
	})
	return p, err
}

// take makes sf an original, or returns nil when the backup cannot give
// it back (not saved whole, or in no album any more) or sel leaves it
// out (chosen false).
func (p *plan) take(f *folder.Folder, sf *state.File, cols map[int64]*state.Collection, sel selection) (o *original, chosen bool) {
	hashes := state.PartHashes(sf)
	want := 1
	if catalog.IsLivePhoto(sf.Meta) {
		want = 2
	}
	o = &original{rec: sf, hashes: hashes}
	live, taken := 0, 0
	for cid, e := range sf.Entries {
		c := cols[cid]
		if c == nil || c.Deleted || e.Deleted {
			continue
		}
		live++
		take, shared := sel.takeAlbum(c)
		if shared {
			p.shared[cid] = c.Name
		}
		if !take || !sel.takeFile(sf.OwnerID) {
			continue
		}
		taken++
		if sf.Status != state.Saved || len(e.Parts) != want || len(hashes) != want {
			continue
		}
		o.albums = append(o.albums, cid)
		if _, ok := p.albums[cid]; !ok {
			p.albums[cid] = albumOf(c)
		}
		if o.parts == nil && !e.Stale {
			for _, part := range e.Parts {
				o.parts = append(o.parts, filepath.Join(f.Dir, c.Folder, part))
			}
		}
	}
	if live > 0 && taken == 0 {
		return nil, false
	}
	if len(o.albums) == 0 || o.parts == nil {
		return nil, true
	}
	sort.Slice(o.albums, func(i, j int) bool { return o.albums[i] < o.albums[j] })
	return o, true
}

func albumOf(c *state.Collection) *sourceAlbum {
	a := &sourceAlbum{id: c.ID, name: c.Name, typ: c.Type, visibility: c.Visibility}
	switch c.Type {
	case "album", "folder", "favorites", "uncategorized":
	default:
		a.typ = "album"
	}
	return a
}

// home is the source album an original's upload commits into: the first
// that is not the favourites (a favourite is an addition to an album).
func (p *plan) home(o *original) int64 {
	for _, id := range o.albums {
		if p.albums[id].typ != "favorites" {
			return id
		}
	}
	return o.albums[0]
}
