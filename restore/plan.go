package restore

import (
	"path/filepath"
	"sort"

	"github.com/quak-photos/quak/download/catalog"
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
}

// readPlan reads the backup's state: every saved file with at least one
// album copy still on the server at the last backup, and the albums that
// hold them. Shared albums come back as the target's own.
func readPlan(f *folder.Folder) (*plan, error) {
	st, err := f.OpenStateReadOnly()
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	cols, err := st.Collections()
	if err != nil {
		return nil, err
	}
	p := &plan{albums: map[int64]*sourceAlbum{}}
	err = st.Files(func(sf *state.File) error {
		if o := p.take(f, sf, cols); o != nil {
			p.files = append(p.files, o)
		} else {
			p.leftOut++
		}
		return nil
	})
	return p, err
}

// take makes sf an original, or returns nil when the backup cannot give it
// back: not saved whole, or in no album any more.
func (p *plan) take(f *folder.Folder, sf *state.File, cols map[int64]*state.Collection) *original {
	if sf.Status != state.Saved {
		return nil
	}
	hashes := catalog.PartHashes(sf)
	want := 1
	if catalog.IsLivePhoto(sf.Meta) {
		want = 2
	}
	o := &original{rec: sf, hashes: hashes}
	for cid, e := range sf.Entries {
		c := cols[cid]
		if c == nil || c.Deleted || e.Deleted || len(e.Parts) != want || len(hashes) != want {
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
	if len(o.albums) == 0 || o.parts == nil {
		return nil
	}
	sort.Slice(o.albums, func(i, j int) bool { return o.albums[i] < o.albums[j] })
	return o
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
