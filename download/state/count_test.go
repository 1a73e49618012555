package state

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// rawRead reads the state at path with bbolt directly.
func rawRead(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, db.View(fn))
	require.NoError(t, db.Close())
}

// recordCount is the count of records the state keeps (-1: none).
func recordCount(t *testing.T, path string) int {
	t.Helper()
	n := -1
	rawRead(t, path, func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyRecords); len(v) == 8 {
			n = int(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	return n
}

func committed(t *testing.T, files []*File) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Commit(files, nil))
	require.NoError(t, s.Close())
	return path
}

func threeFiles() []*File {
	return append(twoFiles(), &File{ID: 3, Status: Saved, Size: 30, Entries: map[int64]*Entry{7: {Name: "c.jpg", Parts: []string{"c.jpg"}}}})
}

// A record updated is not counted again; a new one is.
func TestRecordsAreCountedOnce(t *testing.T) {
	files := twoFiles()
	path := committed(t, files)
	assert.Equal(t, 2, recordCount(t, path))
	s, err := Open(path)
	require.NoError(t, err)
	files[0].Size = 11
	require.NoError(t, s.Commit(files, nil))
	require.NoError(t, s.Commit([]*File{{ID: 9, Status: Saved}}, nil))
	require.NoError(t, s.Close())
	assert.Equal(t, 3, recordCount(t, path))
}

// A brief deleted (damage, another tool) is made from its record, handed
// out with the others and written again: the file keeps its retries, its
// restore when deleted by hand and its place in the counts.
func TestAMissingBriefIsMadeFromItsRecord(t *testing.T) {
	files := threeFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketBriefs).Delete(id(2)) })

	s, err := Open(path)
	require.NoError(t, err)
	want := []Brief{briefOf(files[0]), briefOf(files[1]), briefOf(files[2])}
	assert.ElementsMatch(t, want, allBriefs(t, s))
	require.NoError(t, s.Close())
	rawRead(t, path, func(tx *bolt.Tx) error {
		b, err := decodeBrief(id(2), tx.Bucket(bucketBriefs).Get(id(2)))
		require.NoError(t, err)
		assert.Equal(t, want[1], b)
		return nil
	})
	assert.Equal(t, 3, recordCount(t, path))
}

// Read-only (quak status, verify), a missing brief is handed out all the
// same, and nothing is written.
func TestAMissingBriefReadOnly(t *testing.T) {
	files := threeFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketBriefs).Delete(id(3)) })
	ro, err := OpenReadOnly(path)
	require.NoError(t, err)
	assert.ElementsMatch(t, []Brief{briefOf(files[0]), briefOf(files[1]), briefOf(files[2])}, allBriefs(t, ro))
	require.NoError(t, ro.Close())
	rawRead(t, path, func(tx *bolt.Tx) error {
		assert.Nil(t, tx.Bucket(bucketBriefs).Get(id(3)))
		return nil
	})
}

// When the briefs are compared with the records (a brief is missing), a
// brief whose record is gone is dropped too, and the count follows the
// records.
func TestABriefWithoutItsRecordIsDroppedWhenTheBriefsAreCompared(t *testing.T) {
	files := threeFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketFiles).Delete(id(1)); err != nil {
			return err
		}
		return tx.Bucket(bucketBriefs).Delete(id(2))
	})
	s, err := Open(path)
	require.NoError(t, err)
	allBriefs(t, s) // the brief of record 1, gone, is still handed out this once
	require.NoError(t, s.Close())
	rawRead(t, path, func(tx *bolt.Tx) error {
		assert.Nil(t, tx.Bucket(bucketBriefs).Get(id(1)))
		return nil
	})
	assert.Equal(t, 2, recordCount(t, path))
	s, err = Open(path)
	require.NoError(t, err)
	assert.ElementsMatch(t, []Brief{briefOf(files[1]), briefOf(files[2])}, allBriefs(t, s))
	require.NoError(t, s.Close())
}

// A brief damaged in a state that also lost one is written again when the
// briefs are compared with the records.
func TestADamagedBriefIsWrittenAgainWhenTheBriefsAreCompared(t *testing.T) {
	files := threeFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBriefs)
		if err := bb.Put(id(1), []byte("junk")); err != nil {
			return err
		}
		return bb.Delete(id(3))
	})
	s, err := Open(path)
	require.NoError(t, err)
	assert.ElementsMatch(t, []Brief{briefOf(files[0]), briefOf(files[1]), briefOf(files[2])}, allBriefs(t, s))
	require.NoError(t, s.Close())
	rawRead(t, path, func(tx *bolt.Tx) error {
		for i, f := range files {
			b, err := decodeBrief(id(f.ID), tx.Bucket(bucketBriefs).Get(id(f.ID)))
			require.NoError(t, err, "brief %d", f.ID)
			assert.Equal(t, briefOf(files[i]), b)
		}
		return nil
	})
}

// A state of a quak that kept no count (or whose count was lost) is
// counted when opened, and a brief missing from it is then found.
func TestAStateWithoutItsCountIsCounted(t *testing.T) {
	files := threeFiles()
	path := committed(t, files)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Delete(keyRecords); err != nil {
			return err
		}
		return tx.Bucket(bucketBriefs).Delete(id(1))
	})
	s, err := Open(path)
	require.NoError(t, err)
	assert.ElementsMatch(t, []Brief{briefOf(files[0]), briefOf(files[1]), briefOf(files[2])}, allBriefs(t, s))
	require.NoError(t, s.Close())
	assert.Equal(t, 3, recordCount(t, path))
}

// A count lost while the state is open is counted again at the next
// commit.
func TestACountLostWhileOpenIsCountedAtCommit(t *testing.T) {
	path := committed(t, threeFiles())
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyRecords) }))
	require.NoError(t, s.Commit([]*File{{ID: 4, Status: Saved}}, &Collection{ID: 7, Name: "A", Cursor: 42}))
	cs, err := s.Collections()
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Equal(t, 4, recordCount(t, path))
	require.Contains(t, cs, int64(7), "the commit's album was not recorded")
	assert.Equal(t, int64(42), cs[7].Cursor)
}
