package catalog

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
	"github.com/quak-photos/quak/errs"
)

// linkAlbum reads the album and first page of a link to album a.
func linkAlbum(t *testing.T, s *enteapitest.Server, a *enteapitest.Album) (*publink.Link, *apiclient.LinkInfo, *apiclient.DiffPage) {
	t.Helper()
	l, err := publink.Parse(a.ShareLink(enteapitest.LinkOptions{}).URL())
	require.NoError(t, err)
	c, err := apiclient.NewLinkClient(s.URL(), &http.Client{}, "quak/test", l.AccessToken)
	require.NoError(t, err)
	info, err := c.Info(context.Background())
	require.NoError(t, err)
	page, err := c.Diff(context.Background(), 0)
	require.NoError(t, err)
	return l, info, page
}

func TestOpenLinkAlbumWithTheLinksKey(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("me@example.org", "pw", enteapitest.UserOptions{})
	a := u.AddAlbum("Trip")
	a.SetVisibility(2)
	f := a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: []byte("a"), Caption: "hello"})
	l, info, page := linkAlbum(t, s, a)

	album, err := OpenLinkAlbum(&info.Collection, l.Key)
	require.NoError(t, err)
	assert.Equal(t, "Trip", album.Name)
	assert.Equal(t, a.ID, album.ID)
	assert.Equal(t, u.ID, album.OwnerID)
	assert.Zero(t, album.Visibility, "a link's reader never sees the owner's visibility")
	require.Len(t, page.Diff, 1)
	it, err := OpenItem(&page.Diff[0], album)
	require.NoError(t, err)
	assert.Equal(t, f.Key(), it.Key)
	assert.Equal(t, "a.jpg", it.Meta.Title)
	assert.Equal(t, "hello", it.Meta.Caption)
}

func TestOpenLinkAlbumRefusesAWrongKey(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("me@example.org", "pw", enteapitest.UserOptions{})
	a := u.AddAlbum("Trip")
	l, info, _ := linkAlbum(t, s, a)
	wrong := append([]byte(nil), l.Key...)
	wrong[31] ^= 1
	_, err := OpenLinkAlbum(&info.Collection, wrong)
	assert.ErrorIs(t, err, ErrLinkKey)
	assert.ErrorIs(t, err, errs.ErrCorrupted)
	_, err = OpenLinkAlbum(&info.Collection, l.Key[:16])
	assert.ErrorIs(t, err, ErrLinkKey, "a short key")

	legacy := info.Collection
	legacy.Name = "Old album"
	album, err := OpenLinkAlbum(&legacy, wrong)
	require.NoError(t, err, "a plaintext name cannot check the key")
	assert.Equal(t, "Old album", album.Name)
}
