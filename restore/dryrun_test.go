package restore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/folder"
)

func TestRestoreDryRunPlansAndSendsNothing(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	o.DryRun = true
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 6, sum.Uploaded, "would upload")
	assert.Equal(t, 4, sum.AlbumsCreated, "would create")
	assert.Positive(t, sum.Bytes)
	for _, route := range []string{"POST /collections", "POST /files/upload-url", "POST /files", "POST /collections/add-files"} {
		assert.Zero(t, e.s.Requests(route), route)
	}
	assert.NoDirExists(t, filepath.Join(e.dir, folder.StateDir, "restore"), "a dry run writes nothing")

	e.mustRestore()
	sum, err = e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 0, sum.Uploaded)
	assert.Equal(t, 6, sum.Present)
	assert.Zero(t, sum.Bytes)
}

func TestRestoreRefusesAFolderWithoutABackup(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	_, err := e.restoreWith(e.options())
	var de *folder.DirError
	assert.ErrorAs(t, err, &de)
}
