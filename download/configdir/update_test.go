package configdir_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/configdir"
)

// Issue 31: logins at the same moment each keep their session; the file
// is read, changed and written under its lock.
func TestSessionsChangedAtOnceAreAllKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quak", "session.json")
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := testAccount(fmt.Sprintf("u%d@example.org", i), "http://ente.local", int64(i+1))
			assert.NoError(t, configdir.UpdateSessions(path, func(ss *configdir.Sessions) error {
				ss.Put(a)
				return nil
			}))
		}()
	}
	wg.Wait()
	ss, err := configdir.LoadSessions(path)
	require.NoError(t, err)
	emails := map[string]bool{}
	for _, a := range ss.List {
		emails[a.Email] = true // the sessions' keys and tokens stay out of the test's output
	}
	assert.Len(t, emails, n)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestFoldersRegisteredAtOnceAreAllKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quak", "folders.json")
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, configdir.UpdateFolders(path, func(fs *configdir.Folders) (bool, error) {
				return fs.Set(fmt.Sprintf("/backups/%d", i), "a@example.org", "http://ente.local"), nil
			}))
		}()
	}
	wg.Wait()
	fs, err := configdir.LoadFolders(path)
	require.NoError(t, err)
	assert.Len(t, fs.List, n)
}

// A change that fails, or changes nothing, writes nothing.
func TestAnUpdateThatFailsWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "folders.json")
	boom := errors.New("boom")
	err := configdir.UpdateFolders(path, func(fs *configdir.Folders) (bool, error) {
		fs.Set("/x", "a@b", "http://e")
		return true, boom
	})
	assert.ErrorIs(t, err, boom)
	require.NoError(t, configdir.UpdateFolders(path, func(fs *configdir.Folders) (bool, error) {
		fs.Set("/x", "a@b", "http://e")
		return false, nil
	}))
	_, err = os.Stat(path)
	assert.True(t, os.IsNotExist(err), "nothing was written")

	spath := filepath.Join(t.TempDir(), "session.json")
	err = configdir.UpdateSessions(spath, func(ss *configdir.Sessions) error {
		ss.Put(testAccount("a@b", "http://e", 1))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	_, err = os.Stat(spath)
	assert.True(t, os.IsNotExist(err))
}
