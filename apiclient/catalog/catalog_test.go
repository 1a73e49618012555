package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func TestOpenOwnedAndSharedAlbumsAndItems(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	me := s.AddUser("me@example.org", "pw", enteapitest.UserOptions{})
	sam := s.AddUser("sam@example.org", "pw", enteapitest.UserOptions{})
	mine := me.AddAlbum("Mine")
	mine.SetVisibility(2)
	f := mine.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: []byte("a"), CreationTime: 100, Latitude: 1.5, Longitude: 2.5})
	f.Edit(func(fs *enteapitest.FileSpec) { fs.EditedName = "b.jpg"; fs.EditedTime = 200; fs.Caption = "hi" })
	theirs := sam.AddAlbum("Theirs")
	theirs.AddFile(enteapitest.FileSpec{Title: "c.jpg", Data: []byte("c")})
	theirs.ShareWith(me, "VIEWER")

	c := s.Client(nil).WithToken(me.Token())
	k := Keys{UserID: me.ID, MasterKey: me.MasterKey, PublicKey: me.PublicKey, SecretKey: me.SecretKey}
	cs, err := c.Collections(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	albums := map[string]*Album{}
	for i := range cs {
		a, err := OpenAlbum(&cs[i], k)
		require.NoError(t, err)
		albums[a.Name] = a
	}
	require.Contains(t, albums, "Mine")
	require.Contains(t, albums, "Theirs")
	assert.Equal(t, 2, albums["Mine"].Visibility)
	assert.Equal(t, sam.ID, albums["Theirs"].OwnerID)
	assert.Equal(t, sam.Email, albums["Theirs"].OwnerEmail)

	page, err := c.Diff(context.Background(), mine.ID, 0)
	require.NoError(t, err)
	it, err := OpenItem(&page.Diff[0], albums["Mine"])
	require.NoError(t, err)
	assert.Equal(t, "b.jpg", it.Meta.Title, "editedName overrides the title")
	assert.Equal(t, int64(200), it.Meta.CreationTime, "editedTime overrides the creation time")
	assert.Equal(t, int64(100), it.Meta.ModificationTime)
	assert.Equal(t, "hi", it.Meta.Caption)
	require.NotNil(t, it.Meta.Latitude)
	assert.InDelta(t, 1.5, *it.Meta.Latitude, 1e-9)
	assert.NotEmpty(t, it.Meta.Hash)
	assert.Equal(t, f.Key(), it.Key)
	require.NotNil(t, page.Diff[0].Info)
	assert.Equal(t, page.Diff[0].Info.FileSize, it.Size, "the ciphertext's size, as the server says")
	assert.Positive(t, it.Size)
	for _, info := range []*apiclient.FileInfo{nil, {FileSize: 0}} {
		e := page.Diff[0]
		e.Info = info
		it, err := OpenItem(&e, albums["Mine"])
		require.NoError(t, err)
		assert.Equal(t, int64(-1), it.Size, "no size said: not known (%v)", info)
	}

	page, err = c.Diff(context.Background(), theirs.ID, 0)
	require.NoError(t, err)
	it, err = OpenItem(&page.Diff[0], albums["Theirs"])
	require.NoError(t, err)
	assert.Equal(t, "c.jpg", it.Meta.Title)
}

func TestParseMetadataQuirks(t *testing.T) {
	m, err := parseMetadata([]byte(`{"fileType":3,"title":"x","creationTime":1.5e6,"imageHash":"i","videoHash":"v","latitude":0,"longitude":0}`))
	require.NoError(t, err)
	assert.Equal(t, 3, m.FileType)
	assert.Equal(t, int64(1500000), m.CreationTime)
	assert.Equal(t, int64(1500000), m.ModificationTime, "missing modificationTime falls back to creationTime")
	assert.Equal(t, "i:v", m.Hash)
	assert.Nil(t, m.Latitude, "(0,0) means no location")

	var p publicMagic
	require.NoError(t, jsonUnmarshal(`{"caption":42,"editedTime":0}`, &p))
	p.apply(&m)
	assert.Equal(t, "42", m.Caption)
	assert.Equal(t, int64(1500000), m.CreationTime, "editedTime 0 is ignored")
	assert.Empty(t, m.Offset)

	require.NoError(t, jsonUnmarshal(`{"lat":-33.5,"long":151.25,"offsetTime":"+10:00"}`, &p))
	p.apply(&m)
	require.NotNil(t, m.Latitude, "an edited location")
	assert.InDelta(t, -33.5, *m.Latitude, 1e-12)
	assert.InDelta(t, 151.25, *m.Longitude, 1e-12)
	assert.Equal(t, "+10:00", m.Offset)
	p = publicMagic{}
	require.NoError(t, jsonUnmarshal(`{"lat":0,"long":0,"offsetTime":"UTC"}`, &p))
	p.apply(&m)
	assert.InDelta(t, -33.5, *m.Latitude, 1e-12, "an edit to (0, 0) is no edit")
	assert.Equal(t, "+10:00", m.Offset, "an offset that is not ±HH:mm is ignored")
}

func TestParseOffset(t *testing.T) {
	for in, want := range map[string]int{"+00:00": 0, "+05:30": 19800, "-03:30": -12600, "+14:00": 50400, "-12:00": -43200, "+05:59": 21540} {
		got, ok := ParseOffset(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "Z", "+5:30", "+05:60", "+15:00", "05:30", "+05-30", "+-1:00", "+05:3a", "+05:300"} {
		_, ok := ParseOffset(bad)
		assert.False(t, ok, bad)
	}
}
