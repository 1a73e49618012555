package enteapitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
)

func status(err error) int {
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

func TestSharedAlbumIsSealedToTheRecipient(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	alice := s.AddUser("alice@example.org", "a", enteapitest.UserOptions{})
	bob := s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	album := alice.AddAlbum("Family")
	f := album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("hello")})
	album.ShareWith(bob, "VIEWER")
	c := s.Client(nil).WithToken(bob.Token())
	ctx := context.Background()

	cs, err := c.Collections(ctx, 0)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	col := cs[0]
	assert.Equal(t, alice.ID, col.Owner.ID)
	assert.Equal(t, alice.Email, col.Owner.Email)
	assert.Empty(t, col.KeyDecryptionNonce, "shared keys come without a nonce")
	ckey, err := keys.SealedBoxOpen(col.EncryptedKey, bob.PublicKey, bob.SecretKey)
	require.NoError(t, err)
	name, err := keys.SecretboxOpen(col.EncryptedName, col.NameDecryptionNonce, ckey)
	require.NoError(t, err)
	assert.Equal(t, "Family", string(name))

	page, err := c.Diff(ctx, col.ID, 0)
	require.NoError(t, err)
	require.Len(t, page.Diff, 1)
	fkey, err := keys.SecretboxOpen(page.Diff[0].EncryptedKey, page.Diff[0].KeyDecryptionNonce, ckey)
	require.NoError(t, err)
	assert.Equal(t, f.Key(), fkey)
	md, err := secretstream.OpenBlob(fkey, page.Diff[0].Metadata.DecryptionHeader, page.Diff[0].Metadata.EncryptedData)
	require.NoError(t, err)
	assert.Contains(t, string(md), `"title":"x.jpg"`)

	cursor := apiclient.CollectionsCursor(0, cs)
	album.Unshare(bob)
	cs, err = c.Collections(ctx, cursor)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.True(t, cs[0].IsDeleted, "a removed sharee sees a tombstone")
	_, err = c.Diff(ctx, col.ID, 0)
	assert.Equal(t, 404, status(err))
	_, err = c.DownloadFile(ctx, f.ID)
	assert.Equal(t, 403, status(err))
}

func TestTrashMarksEveryAlbumAndDeletedAlbumsAnswer404(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	a1, a2 := u.AddAlbum("one"), u.AddAlbum("two")
	f := a1.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	a2.Add(f)
	c := s.Client(nil).WithToken(u.Token())
	ctx := context.Background()
	p1, err := c.Diff(ctx, a1.ID, 0)
	require.NoError(t, err)
	f.Trash()
	for _, a := range []*enteapitest.Album{a1, a2} {
		p, err := c.Diff(ctx, a.ID, apiclient.DiffCursor(0, p1.Diff)-1)
		require.NoError(t, err)
		require.Len(t, p.Diff, 1)
		assert.True(t, p.Diff[0].IsDeleted)
		assert.Len(t, p.Diff[0].EncryptedKey, 48, "museum scrubs a file deleted for good, not one in the trash")
	}
	tp, err := c.TrashDiff(ctx, 0)
	require.NoError(t, err)
	require.NotEmpty(t, tp.Diff)
	assert.Equal(t, f.ID, tp.Diff[0].File.ID)
	info, err := c.FilesInfo(ctx, []int64{f.ID})
	require.NoError(t, err)
	assert.Positive(t, info[f.ID].FileSize, "a trashed file still has its info")
	a2.Delete()
	_, err = c.Diff(ctx, a2.ID, 0)
	assert.Equal(t, 404, status(err))
}

func TestThumbnailUpdateFollowsMuseumsRules(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	other := s.AddUser("b@example.org", "b", enteapitest.UserOptions{})
	a := u.AddAlbum("one")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x"), Thumbnail: make([]byte, 500)})
	noRow := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Data: []byte("y"), NoThumbnail: true})
	c := s.Client(nil).WithToken(u.Token())
	ctx := context.Background()
	before, err := c.Diff(ctx, a.ID, 0)
	require.NoError(t, err)

	urls, err := c.UploadURLs(ctx, 3)
	require.NoError(t, err)
	require.Len(t, urls, 3)
	small, big := make([]byte, 300), make([]byte, 600)
	require.NoError(t, c.PutObject(ctx, urls[0].URL, small))
	require.NoError(t, c.PutObject(ctx, urls[1].URL, big))
	header := make([]byte, 24)

	assert.Equal(t, 400, status(c.UpdateThumbnail(ctx, f.ID, "999/foreign", header)), "key of another user")
	assert.Equal(t, 404, status(c.UpdateThumbnail(ctx, 424242, urls[0].ObjectKey, header)), "no such file")
	oc := s.Client(nil).WithToken(other.Token())
	ourls, err := oc.UploadURLs(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, oc.PutObject(ctx, ourls[0].URL, small))
	assert.Equal(t, 403, status(oc.UpdateThumbnail(ctx, f.ID, ourls[0].ObjectKey, header)), "not the owner")
	assert.Equal(t, 404, status(c.UpdateThumbnail(ctx, noRow.ID, urls[0].ObjectKey, header)), "no thumbnail row")
	assert.Equal(t, 500, status(c.UpdateThumbnail(ctx, f.ID, urls[2].ObjectKey, header)), "never uploaded")
	assert.Equal(t, 500, status(c.UpdateThumbnail(ctx, f.ID, urls[1].ObjectKey, header)), "larger than the old one")
	uploaded := f.InfoThumbnailSize()
	require.NoError(t, c.UpdateThumbnail(ctx, f.ID, urls[0].ObjectKey, header))
	assert.Equal(t, header, f.ThumbnailHeader())
	assert.Equal(t, int64(300), f.RecordedThumbnailSize(), "object_keys takes the new object's size")
	assert.Equal(t, uploaded, f.InfoThumbnailSize(), "files.info's thumbSize is never updated")
	page, err := c.Diff(ctx, a.ID, 0)
	require.NoError(t, err)
	for _, e := range page.Diff {
		if e.ID == f.ID {
			assert.Equal(t, uploaded, e.Info.ThumbSize, "the listing keeps announcing the size at upload")
		}
	}
	info, err := c.FilesInfo(ctx, []int64{f.ID})
	require.NoError(t, err)
	assert.Equal(t, uploaded, info[f.ID].ThumbSize, "so does /files/info")
	large, err := c.LargeThumbnails(ctx, 300)
	require.NoError(t, err)
	assert.Equal(t, []int64{f.ID}, large, "large-thumbnails reads object_keys")
	large, err = c.LargeThumbnails(ctx, 301)
	require.NoError(t, err)
	assert.Empty(t, large)

	// The budget is now the new object's size, not the one at upload.
	more, err := c.UploadURLs(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, c.PutObject(ctx, more[0].URL, make([]byte, 400)))
	assert.Equal(t, 500, status(c.UpdateThumbnail(ctx, f.ID, more[0].ObjectKey, header)),
		"larger than the current object, though smaller than files.info says")
	assert.Zero(t, s.ExactRepeats())

	after, err := c.Diff(ctx, a.ID, apiclient.DiffCursor(0, before.Diff))
	require.NoError(t, err)
	require.Len(t, after.Diff, 1, "the update bumps the file")
	assert.Equal(t, f.ID, after.Diff[0].ID)
}

// An exact repeat of a committed PUT /files/thumbnail answers 500 and leaves
// museum's transaction open: the user's next thumbnail commit, even for
// another file, hangs until museum restarts; reads go on.
func TestExactRepeatWedgesUntilRestart(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	v := s.AddUser("v@example.org", "v", enteapitest.UserOptions{})
	a := u.AddAlbum("one")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x"), Thumbnail: make([]byte, 500)})
	g := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Data: []byte("y"), Thumbnail: make([]byte, 500)})
	h := v.AddAlbum("v").AddFile(enteapitest.FileSpec{Title: "z.jpg", Data: []byte("z"), Thumbnail: make([]byte, 500)})
	c := s.Client(nil).WithToken(u.Token())
	vc := s.Client(nil).WithToken(v.Token())
	ctx := context.Background()
	urls, err := c.UploadURLs(ctx, 2)
	require.NoError(t, err)
	for _, x := range urls {
		require.NoError(t, c.PutObject(ctx, x.URL, make([]byte, 100)))
	}
	header := make([]byte, 24)
	require.NoError(t, c.UpdateThumbnail(ctx, f.ID, urls[0].ObjectKey, header))
	assert.Equal(t, 500, status(c.UpdateThumbnail(ctx, f.ID, urls[0].ObjectKey, header)))
	assert.Equal(t, 1, s.ExactRepeats())

	done := make(chan error, 1)
	go func() { done <- c.UpdateThumbnail(ctx, g.ID, urls[1].ObjectKey, header) }()
	for what := range s.Stalled {
		if what == "HUNG PUT /files/thumbnail" {
			break
		}
	}
	_, err = c.Diff(ctx, a.ID, 0)
	require.NoError(t, err, "reads are not blocked")
	vurls, err := vc.UploadURLs(ctx, 2)
	require.NoError(t, err)
	for _, x := range vurls {
		require.NoError(t, vc.PutObject(ctx, x.URL, make([]byte, 100)))
	}
	require.NoError(t, vc.UpdateThumbnail(ctx, h.ID, vurls[0].ObjectKey, header), "another user's rows are not locked")
	// ... unless the file is in one of the wedged file's albums.
	inA := a.AddFileBy(v, enteapitest.FileSpec{Title: "w.jpg", Data: []byte("w"), Thumbnail: make([]byte, 500)})
	vdone := make(chan error, 1)
	go func() { vdone <- vc.UpdateThumbnail(ctx, inA.ID, vurls[1].ObjectKey, header) }()
	for what := range s.Stalled {
		if what == "HUNG PUT /files/thumbnail" {
			break
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the commit went through a wedged museum: %v", err)
	default:
	}
	s.Restart()
	require.NoError(t, <-done, "a restart lets the waiting commit go ahead")
	require.NoError(t, <-vdone)
	assert.Equal(t, 2, s.Hung())
}

// POST /files/info fails the whole batch, as museum's VerifyFileOwner does,
// when one id is someone else's (403), unknown or repeated (400).
func TestFilesInfoIsAllOrNothing(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	v := s.AddUser("v@example.org", "v", enteapitest.UserOptions{})
	f := u.AddAlbum("one").AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	g := v.AddAlbum("two").AddFile(enteapitest.FileSpec{Title: "y.jpg", Data: []byte("y")})
	c := s.Client(nil).WithToken(u.Token())
	ctx := context.Background()
	info, err := c.FilesInfo(ctx, []int64{f.ID})
	require.NoError(t, err)
	assert.Equal(t, f.InfoThumbnailSize(), info[f.ID].ThumbSize)
	for name, c2 := range map[string]struct {
		ids  []int64
		want int
	}{
		"another's file":      {[]int64{f.ID, g.ID}, 403},
		"only another's file": {[]int64{g.ID}, 403},
		"an unknown id":       {[]int64{f.ID, 424242}, 400},
		"only unknown ids":    {[]int64{424242}, 400},
		"a repeated id":       {[]int64{f.ID, f.ID}, 400},
		"no id at all":        {[]int64{}, 400},
	} {
		_, err := c.FilesInfo(ctx, c2.ids)
		assert.Equal(t, c2.want, status(err), name)
	}
}

func TestTokensAreScopedToTheApp(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	tok := u.Token()
	req, err := http.NewRequest("GET", s.URL()+"/users/session-validity/v2", nil)
	require.NoError(t, err)
	req.Header.Set("X-Auth-Token", tok)
	req.Header.Set("X-Client-Package", "io.ente.auth")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)
}

func TestDemoLibrary(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := enteapitest.DemoLibrary(s)
	cs, err := s.Client(nil).WithToken(u.Token()).Collections(context.Background(), 0)
	require.NoError(t, err)
	assert.Len(t, cs, 8)
}

// The fake writes metadata as Ente's apps do: a location only when there
// is one (or (0, 0) when asked), edits in the public magic metadata only
// when made.
func TestMetadataIsWrittenAsEntesAppsWriteIt(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("me@example.org", "pw", enteapitest.UserOptions{})
	a := u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "none.jpg", Data: []byte("n")})
	a.AddFile(enteapitest.FileSpec{Title: "zero.jpg", Data: []byte("z"), ZeroLocation: true})
	a.AddFile(enteapitest.FileSpec{Title: "edited.jpg", Data: []byte("e"), Latitude: 1, Longitude: 2,
		EditedLatitude: -3.5, OffsetTime: "+05:30"})
	a.AddFile(enteapitest.FileSpec{Title: "east.jpg", Data: []byte("w"), Longitude: 7, EditedLongitude: 8})

	c := s.Client(nil).WithToken(u.Token())
	k := catalog.Keys{UserID: u.ID, MasterKey: u.MasterKey, PublicKey: u.PublicKey, SecretKey: u.SecretKey}
	cs, err := c.Collections(context.Background(), 0)
	require.NoError(t, err)
	album, err := catalog.OpenAlbum(&cs[0], k)
	require.NoError(t, err)
	page, err := c.Diff(context.Background(), album.ID, 0)
	require.NoError(t, err)
	meta, pub := map[string]map[string]any{}, map[string]map[string]any{}
	for i := range page.Diff {
		it, err := catalog.OpenItem(&page.Diff[i], album)
		require.NoError(t, err)
		raw := it.Raw
		b, err := secretstream.OpenBlob(it.Key, raw.Metadata.DecryptionHeader, raw.Metadata.EncryptedData)
		require.NoError(t, err)
		m := map[string]any{}
		require.NoError(t, json.Unmarshal(b, &m))
		meta[m["title"].(string)] = m
		if raw.PubMagicMetadata != nil {
			b, err := secretstream.OpenBlob(it.Key, raw.PubMagicMetadata.Header, raw.PubMagicMetadata.Data)
			require.NoError(t, err)
			p := map[string]any{}
			require.NoError(t, json.Unmarshal(b, &p))
			pub[m["title"].(string)] = p
		}
	}
	assert.NotContains(t, meta["none.jpg"], "latitude")
	assert.NotContains(t, pub, "none.jpg", "no edit, no public magic metadata")
	assert.Equal(t, 0.0, meta["zero.jpg"]["latitude"])
	assert.Equal(t, 0.0, meta["zero.jpg"]["longitude"])
	assert.Equal(t, map[string]any{"lat": -3.5, "long": 0.0, "offsetTime": "+05:30"}, pub["edited.jpg"])
	assert.Equal(t, 7.0, meta["east.jpg"]["longitude"], "one coordinate not 0 is a location")
	assert.Equal(t, map[string]any{"lat": 0.0, "long": 8.0}, pub["east.jpg"])
}

// GET /collections/file answers as museum does: 404 for no entry or a
// deleted one, 403 for someone else's file unless the album is shared to
// the caller right now (so a collaborator's file in one's own album is 403).
func TestCollectionFileAnswersAsMuseum(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	alice := s.AddUser("alice@example.org", "a", enteapitest.UserOptions{})
	bob := s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	family := alice.AddAlbum("Family")
	mine := family.AddFile(enteapitest.FileSpec{Title: "mine.jpg", Size: 10})
	gone := family.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Size: 10})
	family.Remove(gone)
	family.ShareWith(bob, "COLLABORATOR")
	bobs := family.AddFileBy(bob, enteapitest.FileSpec{Title: "bobs.jpg", Size: 10})
	ctx := context.Background()
	asAlice, asBob := s.Client(nil).WithToken(alice.Token()), s.Client(nil).WithToken(bob.Token())
	get := func(c *apiclient.Client, f *enteapitest.File) int {
		_, err := c.CollectionFile(ctx, family.ID, f.ID)
		return status(err)
	}
	assert.Zero(t, get(asAlice, mine))
	assert.Equal(t, 404, get(asAlice, gone))
	assert.Equal(t, 403, get(asAlice, bobs), "a collaborator's file in one's own album")
	assert.Zero(t, get(asBob, mine))
	assert.Zero(t, get(asBob, bobs))
	_, err := asAlice.CollectionFile(ctx, family.ID, 999999)
	assert.Equal(t, 404, status(err))

	family.Unshare(bob)
	assert.Equal(t, 403, get(asBob, mine), "no longer shared")
	assert.Zero(t, get(asBob, bobs), "one's own file, wherever it is")
}
