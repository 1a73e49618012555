package restore

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/retry"
)

// present is a file the target account owns: its id, key and the albums
// that hold it.
type present struct {
	id     int64
	key    []byte
	albums map[int64]bool
	// planned, in a dry run, is an upload planned, not a file: the source
	// albums it is to be in.
	planned map[int64]bool
}

// ownAlbum is an album the target owns: decrypted, and the sealed key it
// was created with, by which a restore knows an album it created.
type ownAlbum struct {
	*catalog.Album
	sealedKey []byte
}

// target is what the target account holds: its own albums and its files
// by content. Its methods are safe for the goroutines of one run.
type target struct {
	mu     sync.Mutex
	albums []*ownAlbum
	files  map[string]*present // contentKey → the file
	owned  int                 // the files it owns, live, when listed
	// sized are the target's files by title, type and ciphertext size:
	// an import's original of unknown hash that matches one is hashed
	// before it is uploaded (importitem.go).
	sized map[string]bool
}

// file is the target's file of content key k, or nil.
func (t *target) file(k string) *present {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.files[k]
}

func (t *target) putFile(k string, p *present) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.files[k] = p
}

func (t *target) addAlbum(a *ownAlbum) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.albums = append(t.albums, a)
}

func (t *target) setAlbums(albums []*ownAlbum) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.albums = albums
}

// contentKey is how a restore tells a file the target already has: the
// same hash, type and title (its edited name, if any), Ente's uploader's
// rule (UP.9). Two originals of the same bytes under other names (or
// dates kept apart by their titles) each come back.
func contentKey(hash string, fileType int, title string) string {
	return strconv.Itoa(fileType) + "/" + hash + "/" + title
}

// listTarget reads the target's own albums and every file in them that is
// not deleted; a file without a hash is never taken for another.
func (r *run) listTarget(ctx context.Context) (*target, error) {
	t := &target{files: map[string]*present{}, sized: map[string]bool{}}
	albums, err := r.ownAlbums(ctx)
	if err != nil {
		return nil, err
	}
	t.albums = albums
	owned := map[int64]bool{}
	for _, a := range albums {
		err := r.eachEntry(ctx, a.Album, 0, func(it *catalog.Item) {
			if it.OwnerID != r.o.Target.Keys.UserID {
				return
			}
			owned[it.FileID] = true
			if it.Meta.Hash == "" {
				return
			}
			k := contentKey(it.Meta.Hash, it.Meta.FileType, it.Meta.Title)
			t.sized[sizeKey(it.Meta.Title, it.Meta.FileType, it.Size)] = true
			p := t.files[k]
			if p == nil {
				p = &present{id: it.FileID, key: it.Key, albums: map[int64]bool{}}
				t.files[k] = p
			}
			if p.id == it.FileID {
				p.albums[a.ID] = true
			}
		})
		if err != nil {
			return nil, err
		}
	}
	t.owned = len(owned)
	return t, nil
}

// ownAlbums lists the target's albums that it owns and that are not deleted.
func (r *run) ownAlbums(ctx context.Context) ([]*ownAlbum, error) {
	var cs []apiclient.Collection
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		var err error
		cs, err = r.o.Target.Client.Collections(ctx, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the target's albums: %w", err)
	}
	var out []*ownAlbum
	for i := range cs {
		c := &cs[i]
		if c.IsDeleted || c.Owner.ID != r.o.Target.Keys.UserID {
			continue
		}
		a, err := catalog.OpenAlbum(c, r.o.Target.Keys)
		if err != nil {
			return nil, err
		}
		out = append(out, &ownAlbum{Album: a, sealedKey: c.EncryptedKey})
	}
	return out, nil
}

// eachEntry calls fn with every live entry of album a changed after since,
// decrypted; entries it cannot decrypt are passed over.
func (r *run) eachEntry(ctx context.Context, a *catalog.Album, since int64, fn func(*catalog.Item)) error {
	for {
		var page *apiclient.DiffPage
		err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
			var err error
			page, err = r.o.Target.Client.Diff(ctx, a.ID, since)
			return err
		})
		if err != nil {
			return fmt.Errorf("listing the target's album %d: %w", a.ID, err)
		}
		for i := range page.Diff {
			if page.Diff[i].IsDeleted {
				continue
			}
			if it, err := catalog.OpenItem(&page.Diff[i], a); err == nil {
				fn(it)
			}
		}
		next := apiclient.DiffCursor(since, page.Diff)
		if !page.HasMore || next == since {
			return nil
		}
		since = next
	}
}
