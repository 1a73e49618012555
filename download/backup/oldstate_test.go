package backup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// toOldForm rewrites the state at path as a quak of schema version 1 left
// it: every record with its metadata again in each entry, and no briefs.
func toOldForm(t *testing.T, path string) {
	t.Helper()
	st, err := state.Open(path)
	require.NoError(t, err)
	var files []*state.File
	require.NoError(t, st.Files(func(f *state.File) error { files = append(files, f); return nil }))
	require.NoError(t, st.Close())
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte("briefs")); err != nil {
			return err
		}
		b := tx.Bucket([]byte("files"))
		for _, f := range files {
			v, err := json.Marshal(f) // every field, as older quaks wrote it
			if err != nil {
				return err
			}
			k := make([]byte, 8)
			for i := range 8 {
				k[i] = byte(uint64(f.ID) >> (56 - 8*i))
			}
			if err := b.Put(k, v); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("version"), []byte("1"))
	}))
}

// A backup made by a quak from before the compact records and the briefs
// goes on as it was: nothing saved is downloaded again, a file deleted by
// hand is restored, last run's failure is retried, and the totals count
// every file.
func TestABackupOfAnOlderQuakGoesOn(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	bad := fs[9]
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, bad.ID), enteapitest.FlipAt(20))
	sum := e.mustRun()
	require.Equal(t, 1, sum.Failed)
	toOldForm(t, folder.At(e.dir).StateFile())
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Trip", "00.jpg")))

	before := e.downloads()
	sum = e.mustRun()
	assert.Equal(t, 2, e.downloads()-before, "the file deleted by hand and last run's failure, nothing else")
	assert.Equal(t, 1, sum.LocalRestored)
	assert.Equal(t, 1, sum.New)
	assert.Zero(t, sum.Failed)
	assert.Equal(t, 8, sum.Unchanged)
	assert.Equal(t, 10, sum.TotalFiles)
	for i, f := range fs {
		e.same(filepath.Join("Trip", fmt.Sprintf("%02d.jpg", i)), f.Plaintext())
	}

	sum = e.mustRun()
	assert.Equal(t, 10, sum.Unchanged, "and the next run, on the upgraded state, finds it whole")
	assert.Equal(t, 2, e.downloads()-before)
}
