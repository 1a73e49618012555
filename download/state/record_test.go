package state

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/quak-photos/quak/apiclient/catalog"
)

// oldRecord is a saved file as quak wrote it before the compact form: the
// metadata again in each entry, every field written.
const oldRecord = `{"id":1003,"ownerID":1001,"header":"xqFpHOuOIxX45mEEQkOYmXWwF6sslmzW","size":1041,` +
	`"meta":{"title":"IMG_00000.jpg","fileType":0,"creationTime":1700000000000002,"modificationTime":1700000000000002,"hash":"aGFzaA=="},` +
	`"localHash":"aGFzaA==","status":"saved","entries":{"1002":{"name":"IMG_00000.jpg","parts":["IMG_00000.jpg"],` +
	`"meta":{"title":"IMG_00000.jpg","fileType":0,"creationTime":1700000000000002,"modificationTime":1700000000000002,"hash":"aGFzaA=="},` +
	`"updated":1700000000000003},"1004":{"name":"old.jpg","parts":null,"meta":{"title":"old.jpg","fileType":0,"creationTime":1,"modificationTime":1}}}` +
	`,"updated":"2026-12-02T01:05:42.273070675Z"}`

// oldNoLocalHash is a record of a quak that did not yet keep LocalHash.
const oldNoLocalHash = `{"id":1005,"ownerID":1001,"header":"x","size":1,"meta":{"title":"a.jpg","fileType":0,"creationTime":1,"modificationTime":1,"hash":"aA=="},` +
	`"status":"saved","entries":{"1002":{"name":"a.jpg","parts":["a.jpg"],"meta":{"title":"a.jpg","fileType":0,"creationTime":1,"modificationTime":1,"hash":"aA=="}}},"updated":"2026-12-02T01:05:42Z"}`

func TestRecordsOfOlderQuaksStillRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		if err := b.Put(id(1003), []byte(oldRecord)); err != nil {
			return err
		}
		return b.Put(id(1005), []byte(oldNoLocalHash))
	}))
	require.NoError(t, db.Close())

	s, err = Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	f, err := s.File(1003)
	require.NoError(t, err)
	want := catalog.Meta{Title: "IMG_00000.jpg", CreationTime: 1700000000000002, ModificationTime: 1700000000000002, Hash: "aGFzaA=="}
	assert.Equal(t, want, f.Meta)
	assert.Equal(t, "aGFzaA==", f.LocalHash)
	assert.Equal(t, Saved, f.Status)
	assert.Equal(t, int64(1041), f.Size)
	assert.Equal(t, "xqFpHOuOIxX45mEEQkOYmXWwF6sslmzW", f.Header)
	assert.Equal(t, &Entry{Name: "IMG_00000.jpg", Parts: []string{"IMG_00000.jpg"}, Meta: want, Updated: 1700000000000003}, f.Entries[1002])
	assert.Equal(t, &Entry{Name: "old.jpg", Meta: catalog.Meta{Title: "old.jpg", CreationTime: 1, ModificationTime: 1}}, f.Entries[1004],
		"an old entry without parts keeps none, and its own metadata")
	g, err := s.File(1005)
	require.NoError(t, err)
	assert.Empty(t, g.LocalHash, "an old record without a local hash is not given one")

	// Written back in the compact form, both read the same.
	require.NoError(t, s.Commit([]*File{f, g}, nil))
	f2, err := s.File(1003)
	require.NoError(t, err)
	f.Entries[1004].Parts = []string{} // no parts, written as none
	assert.Equal(t, f, f2)
	g2, err := s.File(1005)
	require.NoError(t, err)
	assert.Equal(t, g, g2)
}

func TestCompactRecordRoundTrip(t *testing.T) {
	lat, lon, lat2 := 1.5, 2.5, 1.5
	m := catalog.Meta{Title: "a.jpg", FileType: 2, CreationTime: 5, ModificationTime: 6, Hash: "h1:h2", Latitude: &lat, Longitude: &lon}
	m2 := m
	m2.Latitude = &lat2
	other := m
	other.Caption = "edited"
	moved, elsewhere, east := m, 9.5, 7.5
	moved.Latitude, moved.Longitude = &elsewhere, &east
	noPlace := m
	noPlace.Latitude, noPlace.Longitude = nil, nil
	files := []*File{
		{ID: 1, Meta: m, LocalHash: "h1:h2", Status: Saved, Entries: map[int64]*Entry{
			1: {Name: "a.jpg", Parts: []string{"a.jpg"}, Meta: m2},
			2: {Name: "a.jpg", Parts: []string{"a.HEIC", "a.MOV"}, Meta: other, Sidecars: []string{"a.xmp"}},
			3: {Name: "b.jpg", Parts: []string{}, Meta: m, Stale: true},
			4: {Name: "c.jpg", Meta: catalog.Meta{}},
			5: {Name: "d.jpg", Parts: []string{"e.jpg"}, Meta: moved},
			6: {Name: "f.jpg", Parts: []string{"f.jpg"}, Meta: noPlace},
		}},
		{ID: 2, Meta: m, LocalHash: "", Status: Failed, Entries: map[int64]*Entry{}},
		{ID: 3, Meta: m, LocalHash: "other", Status: HashMismatch, Entries: map[int64]*Entry{}},
	}
	for _, f := range files {
		v, err := encodeFile(f)
		require.NoError(t, err)
		got, err := decodeFile(v)
		require.NoError(t, err)
		if f.Entries[3] != nil {
			f.Entries[4].Parts = []string{} // nil and empty parts are both written as none
		}
		assert.Equal(t, f, got)
	}
	v, err := encodeFile(&File{ID: 1003, OwnerID: 1001, Header: "xqFpHOuOIxX45mEEQkOYmXWwF6sslmzW", Size: 1041, Status: Saved,
		Meta:      catalog.Meta{Title: "IMG_00000.jpg", CreationTime: 1700000000000002, ModificationTime: 1700000000000002, Hash: "aGFzaA=="},
		LocalHash: "aGFzaA==", Entries: map[int64]*Entry{1002: {Name: "IMG_00000.jpg", Parts: []string{"IMG_00000.jpg"},
			Meta: catalog.Meta{Title: "IMG_00000.jpg", CreationTime: 1700000000000002, ModificationTime: 1700000000000002, Hash: "aGFzaA=="}}}})
	require.NoError(t, err)
	assert.Less(t, len(v), len(oldRecord)/2, "%s", v)
}
