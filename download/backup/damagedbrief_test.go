package backup

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// editBrief rewrites file id's brief in the state with edit, as damage
// would (deletes it when edit returns nil).
func editBrief(t *testing.T, dir string, id int64, edit func([]byte) []byte) {
	t.Helper()
	db, err := bolt.Open(folder.At(dir).StateFile(), 0o600, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	k := binary.BigEndian.AppendUint64(nil, uint64(id))
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		bb := tx.Bucket([]byte("briefs"))
		v := append([]byte(nil), bb.Get(k)...)
		require.NotEmpty(t, v)
		if nv := edit(v); nv != nil {
			return bb.Put(k, nv)
		}
		return bb.Delete(k)
	}))
}

// A brief cut short does not stop the backup: the run reads the file's
// record instead, and a file deleted by hand is restored.
func TestADamagedBriefDoesNotStopTheBackup(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	e.mustRun()
	editBrief(t, e.dir, fs[3].ID, func(v []byte) []byte { return v[:4] })
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Trip", "03.jpg")))
	sum := e.mustRun()
	assert.Equal(t, 10, sum.TotalFiles)
	assert.Equal(t, 1, sum.LocalRestored)
	e.same("Trip/03.jpg", fs[3].Plaintext())
	assert.Equal(t, 10, e.mustRun().TotalFiles)
}

// A failed file's brief changed to read as saved and not pending (it
// still decodes) is not trusted: the file is retried and saved.
func TestAChangedBriefDoesNotHideAFailedFile(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	bad := fs[9]
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, bad.ID), enteapitest.FlipAt(20))
	require.Equal(t, 1, e.mustRun().Failed)
	editBrief(t, e.dir, bad.ID, func(v []byte) []byte { v[0], v[1] = 1, 0; return v })
	sum := e.mustRun()
	assert.Equal(t, 10, sum.TotalFiles)
	e.same("Trip/09.jpg", bad.Plaintext())
}

// A brief deleted outright (damage, another tool) does not hide its file:
// the run finds it missing from the briefs, reads the record, and a file
// deleted by hand is restored and counted.
func TestADeletedBriefDoesNotHideAFile(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	e.mustRun()
	editBrief(t, e.dir, fs[3].ID, func([]byte) []byte { return nil })
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Trip", "03.jpg")))
	sum := e.mustRun()
	assert.Equal(t, 10, sum.TotalFiles)
	assert.Equal(t, 1, sum.LocalRestored)
	e.same("Trip/03.jpg", fs[3].Plaintext())
	assert.Equal(t, 10, e.mustRun().TotalFiles)
}
