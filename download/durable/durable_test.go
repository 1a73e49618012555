package durable

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFileReplacesWholeWithTheModeAsked(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "f.json")
	require.NoError(t, os.WriteFile(path, []byte("old and longer"), 0o600))
	require.NoError(t, WriteFile(tmp, path, []byte("new"), 0o644))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	assert.Empty(t, entries(t, tmp), "no temp file left")
	assert.Equal(t, []string{"f.json"}, entries(t, dir))
}

func TestWriteFileWithNoTempDirWritesBeside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	require.NoError(t, WriteFileSynced("", path, []byte("secret"), 0o600))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, []string{"s"}, entries(t, dir))
}

// A write that cannot finish leaves the old content and no temp file.
func TestAFailedWriteLeavesTheOldFile(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "taken")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "x"), nil, 0o644))
	err := WriteFile(tmp, path, []byte("new"), 0o644)
	require.Error(t, err)
	assert.Empty(t, entries(t, tmp), "the temp file is removed")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
}

func TestATempFileIsPrivateUntilCommitted(t *testing.T) {
	tmp := t.TempDir()
	f, err := CreateTemp(tmp)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(filepath.Base(f.Name()), TempPrefix))
	fi, err := os.Stat(f.Name())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "content never sits in a looser file")
	_, err = f.File().WriteString("photo")
	require.NoError(t, err)
	final := filepath.Join(t.TempDir(), "x.jpg")
	mtime := time.Date(2023, 3, 3, 12, 0, 0, 0, time.UTC)
	require.NoError(t, f.Commit(final, 0o640, mtime))
	fi, err = os.Stat(final)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.True(t, fi.ModTime().Equal(mtime))
	assert.Empty(t, entries(t, tmp))
}

func TestACommitOntoAFolderLeavesNoTemp(t *testing.T) {
	tmp := t.TempDir()
	f, err := CreateTemp(tmp)
	require.NoError(t, err)
	final := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(final, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(final, "x"), nil, 0o644))
	require.Error(t, f.Commit(final, 0o644, time.Time{}))
	assert.Empty(t, entries(t, tmp))
}

func TestDiscardRemovesTheTemp(t *testing.T) {
	tmp := t.TempDir()
	f, err := CreateTemp(tmp)
	require.NoError(t, err)
	f.Discard()
	assert.Empty(t, entries(t, tmp))
}

func TestSyncDirOfAMissingFolderFails(t *testing.T) {
	require.NoError(t, SyncDir(t.TempDir()))
	assert.True(t, errors.Is(SyncDir(filepath.Join(t.TempDir(), "gone")), os.ErrNotExist))
}

// Without a temp folder the temp file goes beside path, never to the
// system's temp folder (another file system, or none at all).
func TestWriteFileWithNoTempDirNeverUsesTheSystemTemp(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	dir := t.TempDir()
	require.NoError(t, WriteFile("", filepath.Join(dir, "f"), []byte("x"), 0o600))
	assert.Equal(t, []string{"f"}, entries(t, dir))
}

// A synced write that fails says so: the sync after it must not turn the
// failure into a success.
func TestAFailedSyncedWriteFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "taken")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "x"), nil, 0o644))
	assert.Error(t, WriteFileSynced("", path, []byte("x"), 0o600), "a folder with files in it is never replaced")
	assert.DirExists(t, path)
}
