package backup

import (
	"sync"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// reserved names in every album folder, and at the top level.
var (
	reservedInAlbum = []string{".meta"}
	reservedTop     = []string{folder.StateDir, DateViewDir}
)

// names keeps the names taken in the backup folder: album folders at the
// top, saved files in each album folder, links in each date folder. The
// last two are read from the state on first use. Safe for concurrent use:
// every change happens under one lock.
type names struct {
	st      *state.Store
	mu      sync.Mutex
	folders *layout.Namer
	albums  map[int64]*layout.Namer
	indexed bool
	dates   map[string]*layout.Namer
}

func newNames(st *state.Store) *names { return &names{st: st, albums: map[int64]*layout.Namer{}} }

// top runs do with the album folders' names, under the lock; the first
// call takes those of colls.
func (n *names) top(colls map[int64]*state.Collection, do func(*layout.Namer)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.folders == nil {
		n.folders = layout.NewNamer()
		for _, name := range reservedTop {
			n.folders.Take(name)
		}
		for _, c := range colls {
			n.folders.Take(c.Folder)
		}
	}
	do(n.folders)
}

// inAlbum runs do with the names taken in album cid's folder, under the
// lock.
func (n *names) inAlbum(cid int64, do func(*layout.Namer)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.indexed {
		n.indexed = true
		_ = n.st.Files(func(f *state.File) error {
			for id, e := range f.Entries {
				n.albumLocked(id).Take(e.Name)
				for _, p := range e.Parts {
					n.albumLocked(id).Take(p)
				}
			}
			return nil
		})
	}
	do(n.albumLocked(cid))
}

func (n *names) albumLocked(cid int64) *layout.Namer {
	nm := n.albums[cid]
	if nm == nil {
		nm = layout.NewFileNamer()
		for _, name := range reservedInAlbum {
			nm.Take(name)
		}
		n.albums[cid] = nm
	}
	return nm
}

// taken reports whether name is a saved file's in album cid's folder: a
// sidecar never replaces one.
func (n *names) taken(cid int64, name string) (taken bool) {
	n.inAlbum(cid, func(nm *layout.Namer) { taken = nm.Taken(name) })
	return taken
}

// inDate runs do with the names taken in the date folder, under the lock.
func (n *names) inDate(dateFolder string, do func(*layout.Namer)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dates == nil {
		n.dates = map[string]*layout.Namer{}
		_ = n.st.Files(func(f *state.File) error {
			if f.View != nil {
				for _, p := range f.View.Parts {
					n.dateLocked(f.View.Folder).Take(p)
				}
			}
			return nil
		})
	}
	do(n.dateLocked(dateFolder))
}

func (n *names) dateLocked(dateFolder string) *layout.Namer {
	nm := n.dates[dateFolder]
	if nm == nil {
		nm = layout.NewFileNamer()
		n.dates[dateFolder] = nm
	}
	return nm
}
