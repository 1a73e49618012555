package enteapitest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
)

func sharedAlbum(t *testing.T, up *uploader, id int64) *catalog.Album {
	t.Helper()
	col, err := up.c.Collection(context.Background(), id)
	require.NoError(t, err)
	a, err := catalog.OpenAlbum(col, up.keys())
	require.NoError(t, err)
	return a
}

// POST /collections as museum takes it (UP.6).
func TestCreateCollectionRules(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	k48, n24 := keys.EncodeB64(make([]byte, 48)), keys.EncodeB64(make([]byte, 24))
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"short key", fmt.Sprintf(`{"encryptedKey":"AAAA","keyDecryptionNonce":%q,"type":"album"}`, n24), 500},
		{"short nonce", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":"AAAA","type":"album"}`, k48), 500},
		{"unknown type", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"shelf"}`, k48, n24), 500},
		{"no type", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q}`, k48, n24), 400},
		{"no key", fmt.Sprintf(`{"keyDecryptionNonce":%q,"type":"album"}`, n24), 400},
		{"magic count 0", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"album","magicMetadata":{"version":1,"count":0,"data":"AAAA","header":"AAAA"}}`, k48, n24), 400},
		{"no name, junk key", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"album"}`, k48, n24), 200},
		{"legacy type", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"CollectionType.album"}`, k48, n24), 200},
	} {
		st, _ := up.raw("POST", "/collections", tc.body)
		assert.Equal(t, tc.status, st, tc.name)
	}

	hidden := up.albumWithMagic(".hidden", map[string]any{"subType": 1, "visibility": 2})
	assert.Equal(t, 2, hidden.Visibility, "the magic metadata sent comes back")
	assert.Equal(t, ".hidden", hidden.Name)
	fav := up.album("Favorites", "favorites")
	again := up.album("Favourites, again", "favorites")
	assert.Equal(t, fav.ID, again.ID, "a second favorites is the first")
	assert.Equal(t, fav.Key, again.Key, "with its key, not the one just sent")
	assert.Equal(t, "Favorites", again.Name)
	cs, err := up.c.Collections(ctx, 0)
	require.NoError(t, err)
	assert.Len(t, cs, 4, "two albums by raw requests, the hidden one, one favorites")

	u2 := up.album("Uncategorized", "uncategorized")
	up.s.Album(u2.ID).Delete()
	st, _ := up.raw("POST", "/collections", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"uncategorized"}`, k48, n24))
	assert.Equal(t, 500, st, "the singleton was deleted")
}

func (up *uploader) albumWithMagic(name string, magic map[string]any) *catalog.Album {
	up.t.Helper()
	key, err := keys.NewKey(up.rnd)
	require.NoError(up.t, err)
	ek, kn, err := keys.SecretboxSealFresh(up.rnd, key, up.u.MasterKey)
	require.NoError(up.t, err)
	en, nn, err := keys.SecretboxSealFresh(up.rnd, []byte(name), key)
	require.NoError(up.t, err)
	mm, err := catalog.SealMagic(up.rnd, key, 1, magic)
	require.NoError(up.t, err)
	col, err := up.c.CreateCollection(context.Background(), apiclient.NewCollection{EncryptedKey: ek, KeyDecryptionNonce: kn,
		EncryptedName: en, NameDecryptionNonce: nn, Type: "album", MagicMetadata: mm})
	require.NoError(up.t, err)
	cs, err := up.c.Collections(context.Background(), 0)
	require.NoError(up.t, err)
	for i := range cs {
		if cs[i].ID == col.ID {
			a, err := catalog.OpenAlbum(&cs[i], up.keys())
			require.NoError(up.t, err)
			return a
		}
	}
	up.t.Fatal("the album is not listed")
	return nil
}

// POST /collections/add-files as museum takes it (UP.7).
func TestAddFilesRules(t *testing.T) {
	up := newUploader(t)
	other := uploaderOn(t, up.s, "other@example.org")
	ctx := context.Background()
	a, b := up.album("a", "album"), up.album("b", "album")
	f := up.seal(a, []byte("one"), map[string]any{"title": "1.jpg"}, nil)
	g := up.seal(a, []byte("two"), map[string]any{"title": "2.jpg"}, nil)
	fe, _ := up.upload(f)
	ge, _ := up.upload(g)
	item := func(id int64, key []byte, under *catalog.Album) apiclient.CollectionFileItem {
		ek, kn, err := keys.SecretboxSealFresh(up.rnd, key, under.Key)
		require.NoError(t, err)
		return apiclient.CollectionFileItem{ID: id, EncryptedKey: ek, KeyDecryptionNonce: kn}
	}
	first := item(fe.ID, f.key, b)
	require.NoError(t, up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{first}))
	e1 := up.entries(b.ID)[fe.ID]
	assert.Equal(t, first.EncryptedKey, e1.EncryptedKey)
	it, err := catalog.OpenItem(&e1, b)
	require.NoError(t, err)
	assert.Equal(t, "1.jpg", it.Meta.Title)

	require.NoError(t, up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(fe.ID, f.key, b)}))
	e2 := up.entries(b.ID)[fe.ID]
	assert.Equal(t, first.EncryptedKey, e2.EncryptedKey, "a file already there keeps its key")
	assert.Greater(t, e2.UpdationTime, e1.UpdationTime, "and shows in the diff again")
	col, err := up.c.Collection(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, e2.UpdationTime, col.UpdationTime)

	up.s.Album(b.ID).Remove(up.s.File(fe.ID))
	require.NoError(t, up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(fe.ID, f.key, b)}))
	e3 := up.entries(b.ID)[fe.ID]
	assert.False(t, e3.IsDeleted, "a removed entry comes back")
	assert.Equal(t, first.EncryptedKey, e3.EncryptedKey, "with its old key")

	twice := item(ge.ID, g.key, b)
	assert.Equal(t, 400, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{twice, twice})), "the same id twice")
	assert.Equal(t, 400, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(424242, g.key, b)})), "no such file")
	assert.Equal(t, 404, status(up.c.AddFiles(ctx, 424242, []apiclient.CollectionFileItem{twice})), "no such album")
	theirs := other.seal(other.album("theirs", "album"), []byte("x"), map[string]any{"title": "x"}, nil)
	te, _ := other.upload(theirs)
	assert.Equal(t, 403, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(te.ID, g.key, b)})), "another user's file")
	assert.Equal(t, 403, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{twice, item(te.ID, g.key, b)})), "mixed owners")
	theirAlbum := other.album("theirs 2", "album")
	assert.Equal(t, 404, status(up.c.AddFiles(ctx, theirAlbum.ID, []apiclient.CollectionFileItem{twice})), "an album not shared")
	up.s.Album(theirAlbum.ID).ShareWith(up.u, "VIEWER")
	assert.Equal(t, 403, status(up.c.AddFiles(ctx, theirAlbum.ID, []apiclient.CollectionFileItem{twice})), "a viewer adds nothing")
	up.s.Album(theirAlbum.ID).ShareWith(up.u, "COLLABORATOR")
	require.NoError(t, up.c.AddFiles(ctx, theirAlbum.ID, []apiclient.CollectionFileItem{item(ge.ID, g.key, sharedAlbum(t, up, theirAlbum.ID))}),
		"a collaborator adds own files")

	up.s.File(ge.ID).Trash()
	err = up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(ge.ID, g.key, b)})
	assert.Equal(t, 409, status(err))
	assert.Equal(t, "FILE_IN_TRASH", code(err))

	junk := apiclient.CollectionFileItem{ID: fe.ID, EncryptedKey: []byte{1, 2, 3}, KeyDecryptionNonce: []byte{4}}
	c := up.album("c", "album")
	require.NoError(t, up.c.AddFiles(ctx, c.ID, []apiclient.CollectionFileItem{junk}), "no crypto is checked")
	assert.Equal(t, apiclient.B64{1, 2, 3}, up.entries(c.ID)[fe.ID].EncryptedKey)

	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf(`{"id":%d,"encryptedKey":"AAAA","keyDecryptionNonce":"AAAA"}`, i+1)
	}
	st, _ := up.raw("POST", "/collections/add-files", fmt.Sprintf(`{"collectionID":%d,"files":[%s]}`, b.ID, strings.Join(many, ",")))
	assert.Equal(t, 413, st)
	st, _ = up.raw("POST", "/collections/add-files", fmt.Sprintf(`{"collectionID":%d,"files":[%s]}`, b.ID, strings.Join(many[:1000], ",")))
	assert.Equal(t, 400, st, "1000 files are a batch (of files that are not there)")
	st, _ = up.raw("POST", "/collections/add-files", fmt.Sprintf(`{"collectionID":%d,"files":[{"id":%d}]}`, b.ID, fe.ID))
	assert.Equal(t, 400, st, "a file without its key")
}

func TestGetCollection(t *testing.T) {
	up := newUploader(t)
	sam := uploaderOn(t, up.s, "sam@example.org")
	ctx := context.Background()
	a := up.album("a", "album")
	col, err := up.c.Collection(ctx, a.ID)
	require.NoError(t, err)
	opened, err := catalog.OpenAlbum(col, up.keys())
	require.NoError(t, err)
	assert.Equal(t, "a", opened.Name)
	assert.Equal(t, a.Key, opened.Key)
	_, err = sam.c.Collection(ctx, a.ID)
	assert.Equal(t, 404, status(err), "a stranger")
	up.s.Album(a.ID).ShareWith(sam.u, "VIEWER")
	_, err = sam.c.Collection(ctx, a.ID)
	require.NoError(t, err, "a sharee")
	up.s.Album(a.ID).Delete()
	col, err = up.c.Collection(ctx, a.ID)
	require.NoError(t, err)
	assert.True(t, col.IsDeleted, "deleted albums are answered")
	st, _ := up.raw("GET", "/collections/abc", "")
	assert.Equal(t, 404, st)
}
