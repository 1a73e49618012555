package enteapitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// POST /files checks in museum's order (UP.4) and no crypto at all.
func TestCommitChecks(t *testing.T) {
	up := newUploader(t)
	other := uploaderOn(t, up.s, "other@example.org")
	a := up.album("a", "album")
	theirs := other.album("theirs", "album")
	gone := up.album("gone", "album")
	f := up.seal(a, []byte("content"), map[string]any{"title": "c.jpg"}, nil)
	fk, tk := up.put(f.ct, apiclient.PartLength), up.put(f.thumb, apiclient.PartLength)
	good := f.body(t, fk, tk)
	var m map[string]any
	send := func(change func(m map[string]any)) (int, string) {
		m = nil
		require.NoError(t, json.Unmarshal(good, &m))
		change(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return up.raw("POST", "/files", string(b))
	}
	obj := func(name string) map[string]any { return m[name].(map[string]any) }
	deleteAlbum(t, up.s, gone.ID)
	for _, tc := range []struct {
		name   string
		change func(m map[string]any)
		status int
		code   string
	}{
		{"another user's key prefix", func(m map[string]any) { obj("file")["objectKey"] = fmt.Sprintf("%d/x", other.u.ID) }, 400, ""},
		{"one object twice", func(m map[string]any) { obj("thumbnail")["objectKey"] = fk }, 400, ""},
		{"no file key", func(m map[string]any) { delete(m, "encryptedKey") }, 400, ""},
		{"no nonce", func(m map[string]any) { m["keyDecryptionNonce"] = "" }, 400, ""},
		{"no file header", func(m map[string]any) { delete(obj("file"), "decryptionHeader") }, 400, ""},
		{"no metadata header", func(m map[string]any) { delete(obj("metadata"), "decryptionHeader") }, 400, ""},
		{"magic count 0", func(m map[string]any) {
			m["pubMagicMetadata"] = map[string]any{"version": 1, "count": 0, "data": "AAAA", "header": "AAAA"}
		}, 400, ""},
		{"an id: an update", func(m map[string]any) { m["id"] = 5 }, 400, ""},
		{"no album", func(m map[string]any) { m["collectionID"] = 424242 }, 404, ""},
		{"another user's album", func(m map[string]any) { m["collectionID"] = theirs.ID }, 403, ""},
		{"deleted album", func(m map[string]any) { m["collectionID"] = gone.ID }, 404, "COLLECTION_DELETED"},
		{"album checked before objects", func(m map[string]any) {
			m["collectionID"] = 424242
			obj("file")["objectKey"] = fmt.Sprintf("%d/never-uploaded", up.u.ID)
		}, 404, ""},
		{"no object", func(m map[string]any) { obj("file")["objectKey"] = fmt.Sprintf("%d/never-uploaded", up.u.ID) }, 503, "OBJECT_SIZE_FETCH_FAILED"},
		{"file size", func(m map[string]any) { obj("file")["size"] = 17 }, 400, ""},
		{"thumbnail size", func(m map[string]any) { obj("thumbnail")["size"] = 17 }, 400, ""},
	} {
		st, body := send(tc.change)
		assert.Equal(t, tc.status, st, tc.name)
		assert.Contains(t, body, tc.code, tc.name)
	}
	assert.Empty(t, up.entries(a.ID), "nothing refused was stored")

	st, _ := send(func(m map[string]any) {
		m["encryptedKey"] = "AAAA"
		delete(obj("metadata"), "encryptedData")
		obj("file")["size"] = 0 // not checked, filled from the store
		m["magicMetadata"] = map[string]any{"version": 7, "count": 9, "data": "junk", "header": "junk"}
	})
	assert.Equal(t, 200, st, "junk is stored: museum checks no crypto")
	require.Len(t, up.entries(a.ID), 1)
	for _, e := range up.entries(a.ID) {
		assert.Equal(t, apiclient.B64{0, 0, 0}, e.EncryptedKey, "the junk key is kept and listed")
		assert.Equal(t, int64(len(f.ct)), e.Info.FileSize)
	}
}

// deleteAlbum deletes an album the fake made through the API.
func deleteAlbum(t *testing.T, s *enteapitest.Server, id int64) {
	t.Helper()
	a := s.Album(id)
	require.NotNil(t, a)
	a.Delete()
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.NewReader(b)
}

// Repeats and duplicates as museum has them (UP.5).
func TestCommitRepeats(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a, b := up.album("a", "album"), up.album("b", "album")
	f := up.seal(a, []byte("content"), map[string]any{"title": "c.jpg"}, nil)
	first, body := up.upload(f)
	files := up.s.RequestsWithPrefix("PUT /store/")

	again, err := up.c.CreateFile(ctx, body)
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID, "the same body answers the same file")
	assert.Greater(t, again.UpdationTime, first.UpdationTime, "with a fresh clock value")
	entries := up.entries(a.ID)
	require.Len(t, entries, 1)
	assert.Equal(t, first.UpdationTime, entries[first.ID].UpdationTime, "and nothing changed")

	var m map[string]any
	change := func(edit func(m map[string]any)) []byte {
		m = nil
		require.NoError(t, json.Unmarshal(body, &m))
		edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	otherMeta := change(func(m map[string]any) {
		m["metadata"].(map[string]any)["decryptionHeader"] = keys.EncodeB64(bytes.Repeat([]byte{9}, 24))
	})
	_, err = up.c.CreateFile(ctx, otherMeta)
	assert.Equal(t, 400, status(err), "the same objects with other metadata")

	for name, body := range map[string][]byte{
		"another album":    change(func(m map[string]any) { m["collectionID"] = b.ID }),
		"another file key": change(func(m map[string]any) { m["encryptedKey"] = keys.EncodeB64(bytes.Repeat([]byte{8}, 48)) }),
	} {
		got, err := up.c.CreateFile(ctx, body)
		require.NoError(t, err, name)
		assert.Equal(t, first.ID, got.ID, name)
	}
	assert.Empty(t, up.entries(b.ID), "a repeat into another album adds nothing there")
	assert.Equal(t, f.nf.EncryptedKey, up.entries(a.ID)[first.ID].EncryptedKey, "nor changes the stored key")

	// New objects for the same plaintext make a second file.
	g := up.seal(a, f.plain, map[string]any{"title": "c.jpg"}, nil)
	second, _ := up.upload(g)
	assert.NotEqual(t, first.ID, second.ID)
	assert.Equal(t, files+2, up.s.RequestsWithPrefix("PUT /store/"), "the second file is uploaded anew")
}

// The owner reads a file's private magic metadata in the diff; a sharee
// never does (UP.3).
func TestPrivateMagicMetadataAtCommit(t *testing.T) {
	up := newUploader(t)
	sam := uploaderOn(t, up.s, "sam@example.org")
	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x.jpg"}, map[string]any{"caption": "hi"})
	var err error
	f.nf.MagicMetadata, err = catalog.SealMagic(up.rnd, f.key, 1, map[string]any{"visibility": 1})
	require.NoError(t, err)
	got, _ := up.upload(f)
	e := up.entries(a.ID)[got.ID]
	require.NotNil(t, e.MagicMetadata)
	plain, err := secretstream.OpenBlob(f.key, e.MagicMetadata.Header, e.MagicMetadata.Data)
	require.NoError(t, err)
	assert.JSONEq(t, `{"visibility":1}`, string(plain))
	require.NotNil(t, e.PubMagicMetadata)

	up.s.Album(a.ID).ShareWith(sam.u, "VIEWER")
	theirs := sam.entries(a.ID)[got.ID]
	assert.Nil(t, theirs.MagicMetadata, "private to the owner")
	assert.NotNil(t, theirs.PubMagicMetadata)
	shared := sharedAlbum(t, sam, a.ID)
	assert.Equal(t, "a", shared.Name, "the name sent, sealed under the album's key, for the sharee too")
	it, err := catalog.OpenItem(&theirs, shared)
	require.NoError(t, err, "the sharee opens the file with the album key sealed to them")
	assert.Equal(t, "x.jpg", it.Meta.Title)
}

// POST /files checks the plan with the file and its thumbnail (UP.10).
func TestCommitChecksThePlanWithBothObjects(t *testing.T) {
	up := newUploader(t)
	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x.jpg"}, nil)
	up.u.SetStorage(0)
	file := fmt.Sprintf("%d/file", up.u.ID)
	up.s.PlaceObject(file, 50<<20-int64(len(f.thumb))+1)
	f.nf.File = apiclient.UploadedObject{ObjectKey: file, DecryptionHeader: f.header, Size: 50<<20 - int64(len(f.thumb)) + 1}
	f.nf.Thumbnail = apiclient.UploadedObject{ObjectKey: up.putPlain(f.thumb), DecryptionHeader: f.thumbHeader, Size: int64(len(f.thumb))}
	body, err := f.nf.Body()
	require.NoError(t, err)
	_, err = up.c.CreateFile(context.Background(), body)
	assert.Equal(t, 426, status(err), "one byte over the 50 MiB of slack, with the thumbnail")
}

// The 10 GiB limit is on the stored object, after the store was asked and
// before sizes and the plan are (UP.4).
func TestCommitSizeLimitAndOrder(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x.jpg"}, nil)
	huge := fmt.Sprintf("%d/huge", up.u.ID)
	up.s.PlaceObject(huge, enteapitest.MaxFileSize+1)
	up.u.SetStorage(0) // the plan would refuse it too, later
	thumb := up.put(f.thumb, apiclient.PartLength)
	_, err := up.c.CreateFile(ctx, f.body(t, huge, thumb))
	assert.Equal(t, 413, status(err), "over 10 GiB, before the size sent is compared")

	f.ct = make([]byte, 100)
	_, err = up.c.CreateFile(ctx, f.body(t, fmt.Sprintf("%d/never", up.u.ID), thumb))
	assert.Equal(t, 503, status(err), "a missing object before its size")
	limit := fmt.Sprintf("%d/limit", up.u.ID)
	up.s.PlaceObject(limit, enteapitest.MaxFileSize)
	_, err = up.c.CreateFile(ctx, f.body(t, limit, thumb))
	assert.Equal(t, 400, status(err), "10 GiB exactly passes the limit; the size sent is compared before the plan")
	f.nf.File = apiclient.UploadedObject{ObjectKey: limit, DecryptionHeader: f.header, Size: enteapitest.MaxFileSize}
	body, err := f.nf.Body()
	require.NoError(t, err)
	_, err = up.c.CreateFile(ctx, body)
	assert.Equal(t, 426, status(err), "then the plan")
}
