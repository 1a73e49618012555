package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/secretstream"
)

func requireDirError(t *testing.T, err error, reason string) {
	t.Helper()
	var de *DirError
	require.True(t, errors.As(err, &de), "want a *DirError, got %v", err)
	assert.Contains(t, de.Error(), reason)
}

func TestMissingFolderIsNeverCreated(t *testing.T) {
	e := newEnv(t)
	e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	o := e.options()
	o.Dir = filepath.Join(e.dir, "usb-disk")
	_, err := Run(context.Background(), o)
	requireDirError(t, err, "does not exist")
	_, serr := os.Stat(o.Dir)
	assert.True(t, os.IsNotExist(serr), "quak created the missing folder")
	assert.Zero(t, e.downloads())

	o.Init = true
	_, err = Run(context.Background(), o)
	require.NoError(t, err)
	st, err := folder.At(o.Dir).OpenStateReadOnly()
	require.NoError(t, err)
	a, err := st.Account()
	require.NoError(t, st.Close())
	require.NoError(t, err)
	assert.Equal(t, e.u.ID, a.UserID, "--init records the account")
}

func TestAnotherAccountsOrServersFolderIsRefused(t *testing.T) {
	e := newEnv(t)
	e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	o := e.options()
	o.Endpoint = "https://api.example.org"
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	n := e.downloads()

	o.Endpoint = "https://photos.self-hosted.example/"
	_, err = Run(context.Background(), o)
	requireDirError(t, err, "another server")
	o.Endpoint = "https://api.example.org/"
	_, err = Run(context.Background(), o)
	require.NoError(t, err, "a trailing slash is the same server")

	other := e.s.AddUser("other@example.org", "pw", enteapitest.UserOptions{})
	o.Keys.UserID = other.ID
	_, err = Run(context.Background(), o)
	requireDirError(t, err, "another account")
	assert.Equal(t, n, e.downloads())
}

func TestTooLittleSpaceStopsBeforeAnyDownload(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	for i := 0; i < 3; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.mp4", i), Size: 40 << 20, Seed: byte(i)})
	}
	o := e.options()
	o.FreeSpace = func(string) (int64, error) { return 150 << 20, nil }
	sum, err := Run(context.Background(), o)
	requireDirError(t, err, "needs")
	assert.Contains(t, err.Error(), "120.0 MiB")
	assert.Contains(t, err.Error(), `in album "A" (40.0 MiB`, "the refusal names the largest file")
	assert.Zero(t, e.downloads(), "nothing downloaded")
	assert.Zero(t, sum.New)

	o.FreeSpace = func(string) (int64, error) { return 1 << 30, nil }
	sum, err = Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.New)
}

// The partial downloads a run takes up are room for it, not room taken:
// a run stopped with large downloads half done is not refused for the
// space they hold.
func TestKeptPartialsCountAsRoom(t *testing.T) {
	e := newEnv(t)
	f, route, o := cutLarge(e) // 8 MiB of a 24 MiB file kept
	need := secretstream.CiphertextSize(24 << 20)
	o.FreeSpace = func(string) (int64, error) { return need + spaceMargin(need) - 4<<20, nil }
	e.s.ClearFaults(route)
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	e.same("Videos/long.mp4", f.Plaintext())
}

// A full disk found mid-run stops the run at once: one error, not a
// failure line for every file left.
func TestFullDiskStopsTheRun(t *testing.T) {
	var made atomic.Int32
	openTemp = func(dir string) (*os.File, error) {
		if made.Add(1) > 2 {
			return nil, &os.PathError{Op: "open", Path: dir, Err: syscall.ENOSPC}
		}
		return os.CreateTemp(dir, ".quak-tmp-*")
	}
	t.Cleanup(func() { openTemp = func(dir string) (*os.File, error) { return os.CreateTemp(dir, ".quak-tmp-*") } })
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	for i := 0; i < 8; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i)})
	}
	o := e.options()
	o.Concurrency = 1
	sum, err := Run(context.Background(), o)
	requireDirError(t, err, "full or read-only")
	assert.True(t, errors.Is(err, syscall.ENOSPC))
	assert.Equal(t, 2, sum.New)
	assert.Zero(t, sum.Failed, "no failure line per remaining file")
	assert.Empty(t, e.kinds(FileFailed))
	assert.Equal(t, 2, e.downloads(), "the run stopped at the first full-disk error, before asking for the file")
	assert.Equal(t, 1, strings.Count(err.Error(), "is full or read-only"), "the message says it once: %v", err)
}
