//go:build unix

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/folder/foldertest"
)

// A backup on a read-only mount is restored, its journal kept in the
// config folder and said so, and a second run uploads nothing; verify
// checks it all the same.
func TestARestoreAndAVerifyOfAReadOnlyBackup(t *testing.T) {
	e, _, dir := restored(t)
	foldertest.ReadOnly(t, dir)

	code, out, errOut := e.run("verify", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, dir+" cannot be written: verified without its lock")
	assert.Contains(t, out, "2 of 2 files checked")

	code, out, errOut = e.run("restore", "--account", "bob@example.org", dir)
	require.Equal(t, exitOK, code, errOut)
	journals := filepath.Join(e.vars["QUAK_CONFIG_DIR"], "restore-journals")
	assert.Contains(t, errOut, dir+" cannot be written: the restore's journal is kept in "+journals+string(filepath.Separator))
	assert.Contains(t, out, "2 of 2 files uploaded")

	code, out, errOut = e.run("restore", "--account", "bob@example.org", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "0 of 2 files uploaded to bob@example.org")
	assert.Contains(t, out, "2 already there")
}

// --journal keeps the journal where it says, whatever DIR allows.
func TestRestoreKeepsItsJournalWhereTold(t *testing.T) {
	e, _, dir := restored(t)
	j := filepath.Join(t.TempDir(), "j")
	code, _, errOut := e.run("restore", "--account", "bob@example.org", "--journal", j, dir)
	require.Equal(t, exitOK, code, errOut)
	matches, err := filepath.Glob(filepath.Join(j, "*", "file-*.json"))
	require.NoError(t, err)
	assert.Len(t, matches, 2)
	restored, err := filepath.Glob(filepath.Join(dir, ".quak", "restore", "*"))
	require.NoError(t, err)
	assert.Empty(t, restored, "nothing in DIR")
	assert.False(t, strings.Contains(errOut, "cannot be written"))
}

// A verify of a read-only backup that finds a changed file says that
// quak status will not know of it, and does not promise that it will.
func TestAVerifyOfAReadOnlyBackupSaysStatusWillNotKnowWhatItFound(t *testing.T) {
	e, _, dir := restored(t)
	path := filepath.Join(dir, "Trip", "one.jpg")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[len(b)-1] ^= 1
	require.NoError(t, os.WriteFile(path, b, 0o644))
	foldertest.ReadOnly(t, dir)

	code, out, errOut := e.run("verify", dir)
	require.Equal(t, exitPartial, code, out+errOut)
	assert.Contains(t, errOut, "quak: changed: "+filepath.Join("Trip", "one.jpg"))
	assert.Contains(t, errOut, dir+" cannot be written: verified without its lock, and neither when each file was checked nor what was found is recorded (quak status will not know)")
	assert.NotContains(t, errOut, "warning", "nothing was tried, so nothing failed")
	assert.NotContains(t, out, "quak status reports")

	code, out, _ = e.run("verify", "--json", dir)
	require.Equal(t, exitPartial, code)
	assert.Contains(t, out, `"readOnly":true`)
}
