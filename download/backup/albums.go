package backup

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// recordAlbum records album a as the listing shows it: new (its folder
// picked), renamed or back (its folder moved), or with another visibility.
func (l *lister) recordAlbum(a *catalog.Album) (*state.Collection, error) {
	c := l.colls[a.ID]
	switch {
	case c == nil:
		return l.newCollection(a)
	case c.Name != a.Name || c.Deleted || hiddenFolder(c):
		if c.Deleted {
			// It came back (shared again, say): its cursor is past files a
			// prune took away, so it is listed from scratch.
			c.Cursor, c.Seen, c.Pruned = 0, 0, false
		}
		c.Visibility = a.Visibility
		return c, l.renameAlbum(c, a)
	case c.Visibility != a.Visibility:
		c.Visibility = a.Visibility
		if err := l.writeAlbumMeta(c); err != nil {
			return nil, err
		}
		return c, l.commit(nil, c)
	}
	return c, nil
}

// albumGone records an album deleted on the server (or left); its folder stays.
func (l *lister) albumGone(c *state.Collection) error {
	if c == nil || c.Deleted {
		return nil
	}
	c.Deleted = true
	l.tally.count(func(s *Summary) { s.AlbumsDeleted++ })
	l.emit(Event{Kind: AlbumDeleted, Album: c.Name, CollectionID: c.ID, Path: c.Folder})
	if err := l.writeAlbumMeta(c); err != nil {
		return err
	}
	return l.commit(l.views.albumFiles(c), c)
}

// newCollection picks the album's folder: an existing `ente export` folder
// of the same album is adopted, any other existing folder is left alone.
func (l *lister) newCollection(a *catalog.Album) (*state.Collection, error) {
	want := layout.SanitizeFolder(a.Name, fmt.Sprintf("Album %d", a.ID))
	var name string
	l.names.top(l.colls, func(n *layout.Namer) {
		name = n.UniqueFree(want, func(name string) bool {
			id, exists := l.placer.folderAlbum(name)
			return !exists || id == a.ID
		})
	})
	c := &state.Collection{ID: a.ID, Name: a.Name, Folder: name, Type: a.Type, OwnerID: a.OwnerID, Visibility: a.Visibility}
	if err := l.placer.scanExport(c); err != nil {
		return nil, err
	}
	if err := l.writeAlbumMeta(c); err != nil {
		return nil, err
	}
	l.colls[a.ID] = c
	return c, l.commit(nil, c)
}

// hiddenFolder reports an album folder an older quak named with a leading
// dot, which file managers hide: it moves to a visible name.
func hiddenFolder(c *state.Collection) bool { return strings.HasPrefix(c.Folder, ".") }

// renameAlbum moves the album's folder to its new name.
func (l *lister) renameAlbum(c *state.Collection, a *catalog.Album) error {
	c.Deleted = false
	if c.Name == a.Name && !hiddenFolder(c) {
		return l.commit(l.views.albumFiles(c), c)
	}
	want := layout.SanitizeFolder(a.Name, fmt.Sprintf("Album %d", a.ID))
	var name string
	l.names.top(l.colls, func(n *layout.Namer) {
		n.Release(c.Folder)
		name = n.UniqueFree(want, func(name string) bool {
			_, exists := l.placer.folderAlbum(name)
			return !exists || strings.EqualFold(name, c.Folder)
		})
	})
	if name != c.Folder {
		if err := l.moveFolder(c.Folder, name); err != nil {
			return err
		}
	}
	l.emit(Event{Kind: AlbumRenamed, Album: a.Name, CollectionID: a.ID, Path: name})
	c.Name, c.Folder = a.Name, name
	if err := l.writeAlbumMeta(c); err != nil {
		return err
	}
	return l.commit(l.views.albumFiles(c), c)
}

// moveFolder moves an album folder to a new name under DIR.
func (l *lister) moveFolder(from, to string) error {
	src, err := layout.Join(l.dir, from)
	if err != nil {
		return err
	}
	dst, err := layout.Join(l.dir, to)
	if err != nil {
		return err
	}
	if err := l.disk.rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("moving the album folder: %w", err)
	}
	l.disk.changed(l.dir)
	return nil
}
