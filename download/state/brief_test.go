package state

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/quak-photos/quak/apiclient"
)

// oldState writes a state as a quak of schema version 1 left it: records
// in the old form and no briefs.
func oldState(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketCollections, bucketFiles, bucketVerified, bucketResume} {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keyVersion, []byte("1")); err != nil {
			return err
		}
		b := tx.Bucket(bucketFiles)
		for i := 1; i <= n; i++ {
			rec := fmt.Sprintf(`{"id":%d,"ownerID":1,"header":"h","size":%d,"meta":{"title":"a.jpg","fileType":0,"creationTime":1,"modificationTime":1,"hash":"aA=="},`+
				`"status":"saved","entries":{"7":{"name":"a.jpg","parts":["a.jpg"],"meta":{"title":"a.jpg","fileType":0,"creationTime":1,"modificationTime":1,"hash":"aA=="}}},"updated":"2026-12-02T01:05:42Z"}`, i, 100+i)
			switch i {
			case 2:
				rec = `{"id":2,"ownerID":1,"header":"","size":0,"meta":{"title":"b.jpg","fileType":0,"creationTime":0,"modificationTime":0},"status":"failed","error":"x","entries":null,` +
					`"pending":{"id":2,"collectionID":7,"ownerID":1,"updationTime":5},"updated":"2026-12-02T01:05:42Z"}`
			case 3:
				rec = `{"id":3,"ownerID":1,"header":"h","size":103,"meta":{"title":"c.jpg","fileType":0,"creationTime":1,"modificationTime":1},"status":"saved",` +
					`"entries":{"7":{"name":"c.jpg","parts":["c.jpg"],"stale":true,"meta":{"title":"c.jpg","fileType":0,"creationTime":1,"modificationTime":1}}},"updated":"2026-12-02T01:05:42Z"}`
			case 4:
				rec = `{"id":4,"ownerID":1,"header":"","size":0,"meta":{"title":"d.jpg","fileType":0,"creationTime":0,"modificationTime":0},"status":"skipped","entries":{},` +
					`"pending":{"id":4,"collectionID":7,"ownerID":1,"updationTime":5},"updated":"2026-12-02T01:05:42Z"}`
			}
			if err := b.Put(id(int64(i)), []byte(rec)); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
	return path
}

func briefs(t *testing.T, s *Store) []Brief {
	t.Helper()
	var out []Brief
	require.NoError(t, s.Briefs(func(b Brief) error { out = append(out, b); return nil }))
	return out
}

var wantBriefs = []Brief{
	{ID: 1, Status: Saved, Size: 101, Places: []Place{{CollectionID: 7, Name: "a.jpg", Parts: []string{"a.jpg"}}}},
	{ID: 2, Status: Failed, Pending: true},
	{ID: 3, Status: Saved, Size: 103, Places: []Place{{CollectionID: 7, Name: "c.jpg", Parts: []string{"c.jpg"}, Stale: true}}},
	{ID: 4, Status: Skipped, Pending: true},
	{ID: 5, Status: Saved, Size: 105, Places: []Place{{CollectionID: 7, Name: "a.jpg", Parts: []string{"a.jpg"}}}},
}

func TestAnOlderStateIsGivenBriefs(t *testing.T) {
	briefsPerTx = 2 // several transactions
	t.Cleanup(func() { briefsPerTx = briefsBatch })
	path := oldState(t, 5)

	r, err := OpenReadOnly(path)
	require.NoError(t, err, "a state of version 1 still opens read-only")
	assert.Equal(t, wantBriefs, briefs(t, r), "made from the records")
	require.NoError(t, r.Close())

	s, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, wantBriefs, briefs(t, s))
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		assert.Equal(t, "2", string(tx.Bucket(bucketMeta).Get(keyVersion)))
		assert.Equal(t, 5, tx.Bucket(bucketBriefs).Stats().KeyN, "kept, not made again on each pass")
		return nil
	}))

	// A commit keeps each brief in line with its record.
	f, err := s.File(2)
	require.NoError(t, err)
	f.Status, f.Pending, f.Size = Saved, nil, 7
	f.Entries[7] = &Entry{Name: "b.jpg", Parts: []string{"b.jpg"}}
	require.NoError(t, s.Commit([]*File{f, {ID: 9, Status: Failed, Pending: &apiclient.File{ID: 9}}}, nil))
	require.NoError(t, s.Close())

	s, err = Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	want := append([]Brief{}, wantBriefs...)
	want[1] = Brief{ID: 2, Status: Saved, Size: 7, Places: []Place{{CollectionID: 7, Name: "b.jpg", Parts: []string{"b.jpg"}}}}
	want = append(want, Brief{ID: 9, Status: Failed, Pending: true})
	assert.Equal(t, want, briefs(t, s))
}

func TestANewerStateIsRefused(t *testing.T) {
	path := oldState(t, 1)
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, []byte("3")) }))
	require.NoError(t, db.Close())
	_, err = Open(path)
	require.ErrorContains(t, err, "state schema version 3")
	_, err = OpenReadOnly(path)
	require.ErrorContains(t, err, "state schema version 3")
}

func TestBriefRoundTrip(t *testing.T) {
	f := &File{ID: 42, Status: HashMismatch, Size: 1 << 40, Entries: map[int64]*Entry{
		9:  {Name: "IMG_1.HEIC", Parts: []string{"IMG_1.HEIC", "IMG_1.MOV"}, Deleted: true},
		-3: {Name: "é.jpg", Parts: []string{}, Stale: true},
		1:  {Name: "a.jpg", Parts: []string{"a.jpg"}},
		2:  {Name: "b.jpg", Parts: []string{"other.jpg"}},
	}}
	b := briefOf(f)
	assert.True(t, b.Placed())
	assert.True(t, b.Stale())
	got, err := decodeBrief(id(42), b.encode())
	require.NoError(t, err)
	assert.Equal(t, Brief{ID: 42, Status: HashMismatch, Size: 1 << 40, Places: []Place{
		{CollectionID: -3, Name: "é.jpg", Parts: []string{}, Stale: true},
		{CollectionID: 1, Name: "a.jpg", Parts: []string{"a.jpg"}},
		{CollectionID: 2, Name: "b.jpg", Parts: []string{"other.jpg"}},
		{CollectionID: 9, Name: "IMG_1.HEIC", Parts: []string{"IMG_1.HEIC", "IMG_1.MOV"}, Deleted: true},
	}}, got)
	empty, err := decodeBrief(id(1), briefOf(&File{ID: 1, Status: Failed}).encode())
	require.NoError(t, err)
	assert.False(t, empty.Placed())
	assert.False(t, empty.Stale())

	v := b.encode()
	for n := briefHead; n < len(v); n++ {
		_, err := decodeBrief(id(42), v[:n])
		assert.ErrorIs(t, err, errCorruptBrief, "cut at %d", n)
	}
	_, err = decodeBrief(id(42), v[:briefHead-1])
	assert.ErrorIs(t, err, errCorruptBrief)
	_, err = decodeBrief(id(42), append(append([]byte{}, v...), 0))
	assert.ErrorIs(t, err, errCorruptBrief, "a byte more than its places")
	bad := append([]byte{9}, v[1:]...)
	_, err = decodeBrief(id(42), bad)
	assert.ErrorIs(t, err, errCorruptBrief, "an unknown status")
	body := append([]byte{statusCoded + 1}, v[1:len(v)-briefCRC]...)
	_, err = decodeBrief(id(42), sealed(body))
	assert.ErrorIs(t, err, errCorruptBrief, "an unknown status, sealed")
	_, err = decodeBrief(id(42), sealed(append(append([]byte{}, v[:len(v)-briefCRC]...), 0)))
	assert.ErrorIs(t, err, errCorruptBrief, "a byte more than its places, sealed")

	// Every status quak writes reads back as itself.
	for _, st := range statusCodes {
		got, err := decodeBrief(id(7), briefOf(&File{ID: 7, Status: st}).encode())
		require.NoError(t, err, "status %q", st)
		assert.Equal(t, st, got.Status)
	}
}

// A backup killed while it gave an older state its briefs leaves some of
// them, and the state still at version 1: readers make every brief from
// the records, not from the few made.
func TestBriefsMadeInPartAreNotRead(t *testing.T) {
	path := oldState(t, 5)
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		bb, err := tx.CreateBucket(bucketBriefs)
		if err != nil {
			return err
		}
		return bb.Put(id(1), Brief{ID: 1, Status: Saved}.encode())
	}))
	require.NoError(t, db.Close())
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	assert.Equal(t, wantBriefs, briefs(t, r))
	require.NoError(t, r.Close())
	s, err := Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	assert.Equal(t, wantBriefs, briefs(t, s), "and a backup makes them all again")
}

// rawUpdate changes the state at path with bbolt directly, as damage or
// another tool would.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(fn))
	require.NoError(t, db.Close())
}

func twoFiles() []*File {
	return []*File{
		{ID: 1, Status: Saved, Size: 10, Entries: map[int64]*Entry{7: {Name: "a.jpg", Parts: []string{"a.jpg"}}}},
		{ID: 2, Status: Failed, Size: 20, Pending: &apiclient.File{ID: 2},
			Entries: map[int64]*Entry{7: {Name: "b.jpg", Parts: []string{"b.jpg"}, Deleted: true}}},
	}
}

func allBriefs(t *testing.T, s *Store) []Brief {
	t.Helper()
	var out []Brief
	require.NoError(t, s.Briefs(func(b Brief) error { out = append(out, b); return nil }))
	return out
}

// A brief cut short, or changed so that it still decodes (a failed file
// made to read as saved and not pending), is made from its record instead,
// and written again: a damaged brief neither stops the backup nor hides a
// file from its retries and counts.
func TestADamagedBriefIsMadeFromItsRecord(t *testing.T) {
	files := twoFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBriefs)
		if err := bb.Put(id(1), bb.Get(id(1))[:4]); err != nil {
			return err
		}
		v := append([]byte(nil), bb.Get(id(2))...)
		v[0], v[1] = 1, 0 // saved, not pending
		return bb.Put(id(2), v)
	})

	s, err := Open(path)
	require.NoError(t, err)
	want := []Brief{briefOf(files[0]), briefOf(files[1])}
	assert.Equal(t, want, allBriefs(t, s))
	require.NoError(t, s.Close())
	// Written again: read straight from the briefs bucket, both decode.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	defer func() { _ = db.Close() }()
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		for i, k := range [][]byte{id(1), id(2)} {
			b, err := decodeBrief(k, tx.Bucket(bucketBriefs).Get(k))
			require.NoError(t, err)
			assert.Equal(t, want[i], b)
		}
		return nil
	}))
}

// A brief whose checksum holds but whose flags are none quak writes is
// damaged too.
func TestUnknownBriefFlagsAreDamage(t *testing.T) {
	v := briefOf(twoFiles()[0]).encode()
	body := append([]byte(nil), v[:len(v)-briefCRC]...)
	body[1] |= 0x80
	_, err := decodeBrief(id(1), sealed(body))
	assert.ErrorIs(t, err, errCorruptBrief)
	body = append([]byte(nil), v[:len(v)-briefCRC]...)
	body[len(body)-len("a.jpg")-2] |= 0x40 // the place's flags
	_, err = decodeBrief(id(1), sealed(body))
	assert.ErrorIs(t, err, errCorruptBrief)
	_, err = decodeBrief(id(1), v)
	assert.NoError(t, err, "as written")
}

// A damaged brief whose record is gone is dropped; a damaged record is
// still an error.
func TestADamagedBriefWithoutItsRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Commit(twoFiles(), nil))
	require.NoError(t, s.Close())
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketBriefs).Put(id(1), []byte("junk")); err != nil {
			return err
		}
		return tx.Bucket(bucketFiles).Delete(id(1))
	})
	s, err = Open(path)
	require.NoError(t, err)
	got := allBriefs(t, s)
	require.Len(t, got, 1)
	assert.Equal(t, int64(2), got[0].ID)
	require.NoError(t, s.Close())
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketBriefs).Get(id(1)) != nil {
			t.Error("the brief of a record that is gone was kept")
		}
		if err := tx.Bucket(bucketBriefs).Put(id(2), []byte("junk")); err != nil {
			return err
		}
		return tx.Bucket(bucketFiles).Put(id(2), []byte("{not a record"))
	})
	s, err = Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	assert.Error(t, s.Briefs(func(Brief) error { return nil }))
}

// A state read-only (quak status, verify) with a damaged brief reads it
// from the record and writes nothing.
func TestADamagedBriefReadOnly(t *testing.T) {
	files := twoFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketBriefs).Put(id(1), []byte("junk")) })
	ro, err := OpenReadOnly(path)
	require.NoError(t, err)
	defer func() { _ = ro.Close() }()
	assert.Equal(t, []Brief{briefOf(files[0]), briefOf(files[1])}, allBriefs(t, ro))
}

// A state of this version whose briefs bucket is gone is briefed again
// when opened, and saves as before.
func TestAStateWithoutItsBriefsBucket(t *testing.T) {
	files := twoFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketBriefs) })
	s, err := Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	assert.Equal(t, []Brief{briefOf(files[0]), briefOf(files[1])}, allBriefs(t, s))
	assert.NoError(t, s.Commit([]*File{{ID: 3, Status: Saved}}, nil))
	assert.Len(t, allBriefs(t, s), 3)
}
