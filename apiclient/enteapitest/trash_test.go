package enteapitest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// An album deleted with its files: the album a tombstone, its owner's
// files trashed out of every album, others' files taken out of it only.
func TestTrashWithFiles(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	alice := s.AddUser("alice@example.org", "a", enteapitest.UserOptions{})
	bob := s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	require.Same(t, bob, s.User(" BOB@example.org"), "found as museum finds an email")
	assert.Nil(t, s.User("carol@example.org"))
	trip, other := alice.AddAlbum("Trip"), alice.AddAlbum("Other")
	mine := trip.AddFile(enteapitest.FileSpec{Title: "mine.jpg", Data: []byte("m")})
	other.Add(mine)
	trip.ShareWith(bob, "COLLABORATOR")
	bobs := trip.AddFileBy(bob, enteapitest.FileSpec{Title: "bob.jpg", Data: []byte("b")})
	bobsAlbum := bob.AddAlbum("Bob's")
	bobsAlbum.Add(bobs)
	assert.ElementsMatch(t, []*enteapitest.Album{trip, other}, mine.Albums())

	trip.TrashWithFiles()
	assert.True(t, mine.Trashed())
	assert.Empty(t, mine.Albums(), "out of every album")
	assert.False(t, bobs.Trashed(), "another's file is not trashed")
	assert.Equal(t, []*enteapitest.Album{bobsAlbum}, bobs.Albums())
	cs, err := s.Client(nil).WithToken(alice.Token()).Collections(context.Background(), 0)
	require.NoError(t, err)
	for _, c := range cs {
		assert.Equal(t, c.ID == trip.ID, c.IsDeleted, "album %d", c.ID)
	}
}

// A file archived on its own: its private magic metadata under its key,
// one version up each time, and its entry listed again.
func TestFileVisibility(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	alice := s.AddUser("alice@example.org", "a", enteapitest.UserOptions{})
	a := alice.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	c := s.Client(nil).WithToken(alice.Token())
	ctx := context.Background()
	page, err := c.Diff(ctx, a.ID, 0)
	require.NoError(t, err)
	require.Len(t, page.Diff, 1)
	assert.Nil(t, page.Diff[0].MagicMetadata)
	cursor := page.Diff[0].UpdationTime

	for version, v := range []int{1, 2, 0} {
		f.SetVisibility(v)
		page, err = c.Diff(ctx, a.ID, cursor)
		require.NoError(t, err)
		require.Len(t, page.Diff, 1, "the entry is listed again")
		cursor = page.Diff[0].UpdationTime
		mm := page.Diff[0].MagicMetadata
		require.NotNil(t, mm)
		assert.Equal(t, version+1, mm.Version)
		b, err := secretstream.OpenBlob(f.Key(), mm.Header, mm.Data)
		require.NoError(t, err)
		assert.JSONEq(t, `{"visibility":`+string(rune('0'+v))+`}`, string(b))
	}
}
