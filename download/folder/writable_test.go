//go:build unix

package folder

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/folder/foldertest"
)

func TestWritableTellsAFolderQuakCannotWrite(t *testing.T) {
	f := prepared(t)
	assert.True(t, f.Writable())
	foldertest.ReadOnly(t, f.Dir)
	assert.False(t, f.Writable())
}

// What counts is quak's own area when DIR has one, else DIR.
func TestWritableLooksAtQuaksOwnArea(t *testing.T) {
	f := prepared(t)
	foldertest.ReadOnly(t, f.StateDir())
	assert.False(t, f.Writable(), "DIR takes writes, its .quak does not")

	bare := At(t.TempDir())
	assert.True(t, bare.Writable())
	foldertest.ReadOnly(t, bare.Dir)
	assert.False(t, bare.Writable(), "no .quak: DIR itself")
}

// A record that cannot be removed is an error, never taken as dropped.
func TestDropIntentSaysWhenItCannot(t *testing.T) {
	j, err := JournalStore{Root: filepath.Join(t.TempDir(), "j")}.Open("s", "e", 1)
	require.NoError(t, err)
	require.NoError(t, j.PutIntent(&Intent{Source: 1, FileID: 10}))
	foldertest.ReadOnly(t, j.Dir())
	assert.Error(t, j.DropIntent(1))
	in, err := j.Intent(1)
	require.NoError(t, err)
	assert.NotNil(t, in)
}
