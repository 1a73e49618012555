//go:build unix

package cmd

import (
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
