package cmd

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// A backup folder remounted read-only after a good run: every backup
// exits 5 and cannot even record that, so status must see it itself and
// exit 5 instead of calling the backup healthy.
func TestStatusOnAFolderThatCannotBeWrittenExits5(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	code, lines := statusOf(t, e, dir)
	require.Equal(t, exitOK, code, lines)

	qdir := filepath.Join(dir, folder.StateDir)
	asked := ""
	e.canWrite = func(d string) error {
		asked = d
		return &os.PathError{Op: "open", Path: d, Err: syscall.EROFS}
	}
	code, lines = statusOf(t, e, dir)
	assert.Equal(t, exitUnusableDir, code, lines)
	assert.Contains(t, lines, "cannot be written")
	assert.Contains(t, lines, "read-only file system")
	wantDir, err := filepath.Abs(qdir)
	require.NoError(t, err)
	assert.Equal(t, wantDir, asked, "the check writes where runs record themselves")
}
