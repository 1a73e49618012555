package restore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/retry"
)

// hiddenName is the name of Ente's default hidden album.
const hiddenName = ".hidden"

// album returns the target album for source album sa: the one the journal
// names, else one the target already has of that name, type and
// visibility (favourites: the account's one), else a new one. A dry run
// creates nothing and answers a zero album for one it would create.
func (r *run) album(ctx context.Context, sa *sourceAlbum) (*catalog.Album, error) {
	r.albumMu.Lock()
	defer r.albumMu.Unlock()
	if a := r.albums[sa.id]; a != nil {
		return a, nil
	}
	a, err := r.resolveAlbum(ctx, sa)
	if err != nil {
		return nil, fmt.Errorf("album %q: %w", sa.name, err)
	}
	r.albums[sa.id] = a
	return a, nil
}

func (r *run) resolveAlbum(ctx context.Context, sa *sourceAlbum) (*catalog.Album, error) {
	var rec *folder.AlbumIntent
	if r.j != nil {
		var err error
		if rec, err = r.j.Album(sa.id); err != nil {
			return nil, err
		}
	}
	if rec != nil && rec.Source != sa.id {
		rec = nil // not this album's record (copied over it)
	}
	if rec != nil && rec.ID != 0 {
		if a := r.tgt.byID(rec.ID); a != nil {
			return a.Album, nil
		}
		rec = nil // gone from the target since: made again
	}
	if rec != nil && len(rec.Body) > 0 {
		// Sent by an earlier run whose answer never came: created when the
		// listing shows the key it was sent with.
		if a := r.tgt.bySealedKey(rec.Body); a != nil {
			return a.Album, r.j.PutAlbum(&folder.AlbumIntent{Source: sa.id, Body: rec.Body, ID: a.ID})
		}
		return r.createAlbum(ctx, rec)
	}
	if a := r.tgt.find(sa); a != nil {
		if r.j == nil {
			return a.Album, nil
		}
		return a.Album, r.j.PutAlbum(&folder.AlbumIntent{Source: sa.id, ID: a.ID})
	}
	r.note(Event{Kind: AlbumCreated, Album: sa.name}, func(s *Summary) { s.AlbumsCreated++ })
	if r.o.DryRun {
		return &catalog.Album{Name: sa.name, Type: sa.typ}, nil
	}
	body, err := r.albumBody(sa)
	if err != nil {
		return nil, err
	}
	rec = &folder.AlbumIntent{Source: sa.id, Body: body}
	if err := r.j.PutAlbum(rec); err != nil {
		return nil, err
	}
	return r.createAlbum(ctx, rec)
}

// createAlbum sends rec's body. POST /collections is not safe to repeat
// (each call makes an album), so after a failed attempt the target's
// albums are listed again and one with the key sent is taken as made.
func (r *run) createAlbum(ctx context.Context, rec *folder.AlbumIntent) (*catalog.Album, error) {
	var nc apiclient.NewCollection
	if err := json.Unmarshal(rec.Body, &nc); err != nil {
		return nil, err
	}
	var made *catalog.Album
	tries := 0
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		if tries++; tries > 1 {
			if err := r.relist(ctx); err != nil {
				return err
			}
			if a := r.tgt.bySealedKey(rec.Body); a != nil {
				made = a.Album
				return nil
			}
		}
		c, err := r.o.Target.Client.CreateCollection(ctx, nc)
		if err != nil {
			return err
		}
		// A second favourites album is not made: museum answers with the
		// existing one, under its own key.
		made, err = catalog.OpenAlbum(c, r.o.Target.Keys)
		if err == nil {
			r.tgt.addAlbum(&ownAlbum{Album: made, sealedKey: c.EncryptedKey})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	rec.ID = made.ID
	return made, r.j.PutAlbum(rec)
}

// relist reads the target's albums again.
func (r *run) relist(ctx context.Context) error {
	albums, err := r.ownAlbums(ctx)
	if err == nil {
		r.tgt.setAlbums(albums)
	}
	return err
}

// albumBody seals a new album for sa under a fresh key: its name, type,
// and for an archived or hidden album its visibility (Ente's default
// hidden album has subType 1).
func (r *run) albumBody(sa *sourceAlbum) ([]byte, error) {
	key, err := keys.NewKey(r.o.Rand)
	if err != nil {
		return nil, err
	}
	nc := apiclient.NewCollection{Type: sa.typ}
	if nc.EncryptedKey, nc.KeyDecryptionNonce, err = keys.SecretboxSealFresh(r.o.Rand, key, r.o.Target.Keys.MasterKey); err != nil {
		return nil, err
	}
	if nc.EncryptedName, nc.NameDecryptionNonce, err = keys.SecretboxSealFresh(r.o.Rand, []byte(sa.name), key); err != nil {
		return nil, err
	}
	if sa.visibility != 0 {
		fields := map[string]any{"visibility": sa.visibility}
		if sa.visibility == 2 && sa.name == hiddenName {
			fields["subType"] = 1
		}
		if nc.MagicMetadata, err = catalog.SealMagic(r.o.Rand, key, 1, fields); err != nil {
			return nil, err
		}
	}
	return json.Marshal(nc)
}

func (t *target) byID(id int64) *ownAlbum {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.albums {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// bySealedKey finds the album created with body: museum stores the sealed
// key as sent, and a fresh nonce makes it unique.
func (t *target) bySealedKey(body []byte) *ownAlbum {
	var nc apiclient.NewCollection
	if json.Unmarshal(body, &nc) != nil || len(nc.EncryptedKey) == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.albums {
		if bytes.Equal(a.sealedKey, nc.EncryptedKey) {
			return a
		}
	}
	return nil
}

// find is the target's album that sa can go into: the favourites or the
// uncategorized album for those types, else an album of the same name,
// type and visibility.
func (t *target) find(sa *sourceAlbum) *ownAlbum {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.albums {
		switch {
		case a.Type != sa.typ:
		case sa.typ == "favorites" || sa.typ == "uncategorized":
			return a
		case a.Name == sa.name && a.Visibility == sa.visibility:
			return a
		}
	}
	return nil
}
