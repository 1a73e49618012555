package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
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
	requireDirError(t, err, fmt.Sprintf("backup folder %s is the backup of me@example.org on https://api.example.org (user %d), "+
		"not of me@example.org on https://photos.self-hosted.example/ (user %d)", e.dir, e.u.ID, e.u.ID))
	o.Endpoint = "https://api.example.org/"
	_, err = Run(context.Background(), o)
	require.NoError(t, err, "a trailing slash is the same server")

	other := e.s.AddUser("other@example.org", "pw", enteapitest.UserOptions{})
	o.Keys.UserID, o.Email = other.ID, other.Email
	_, err = Run(context.Background(), o)
	requireDirError(t, err, fmt.Sprintf("is the backup of me@example.org on https://api.example.org/ (user %d), "+
		"not of other@example.org on https://api.example.org/ (user %d)", e.u.ID, other.ID))
	o.Endpoint = ""
	_, err = Run(context.Background(), o)
	requireDirError(t, err, fmt.Sprintf("is the backup of me@example.org on https://api.example.org/ (user %d), "+
		"not of other@example.org (user %d)", e.u.ID, other.ID))
	assert.Equal(t, n, e.downloads())
}

// A folder that recorded no server, and a run told none, are not refused
// for the server.
func TestAFolderOrARunWithoutAServerIsNotRefusedForIt(t *testing.T) {
	e := newEnv(t)
	o := e.options()
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	o.Endpoint = "https://api.example.org"
	_, err = Run(context.Background(), o)
	require.NoError(t, err, "the folder recorded no server")
	o.Endpoint = ""
	_, err = Run(context.Background(), o)
	require.NoError(t, err, "the run was told no server")
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

// needs runs a backup refused for want of space, and returns how much it
// said it needs.
func (e *env) needs(o Options) string {
	e.t.Helper()
	o.FreeSpace = func(string) (int64, error) { return 0, nil }
	_, err := Run(context.Background(), o)
	requireDirError(e.t, err, "needs")
	m := regexp.MustCompile(`needs (.+?) for what is new`).FindStringSubmatch(err.Error())
	require.Len(e.t, m, 2, err.Error())
	return m[1]
}

// The space check counts what the run would download: last run's failures
// in the albums it takes, new files and files whose content changed; not
// a saved file whose metadata alone changed, nor a failure in an album
// left out or deleted. A file system with exactly the bytes needed and
// the margin is enough.
func TestTheSpaceCheckCountsWhatTheRunWouldDownload(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	renamed := a.AddFile(enteapitest.FileSpec{Title: "renamed.jpg", Size: 100, Seed: 1})
	changed := a.AddFile(enteapitest.FileSpec{Title: "changed.jpg", Size: 200, Seed: 2})
	failing := []*enteapitest.File{
		a.AddFile(enteapitest.FileSpec{Title: "fails.jpg", Size: 11, Seed: 3}),
		a.AddFile(enteapitest.FileSpec{Title: "fails too.jpg", Size: 13, Seed: 4}),
		b.AddFile(enteapitest.FileSpec{Title: "fails.jpg", Size: 400, Seed: 5}),
	}
	for _, f := range failing {
		e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), enteapitest.Repeat(enteapitest.Status(500), 8)...)
	}
	require.Equal(t, 3, e.mustRun().Failed)
	for _, f := range failing {
		e.s.ClearFaults(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID))
	}
	renamed.Edit(func(s *enteapitest.FileSpec) { s.Title = "other.jpg" })
	changed.Reupload(make([]byte, 30))
	a.AddFile(enteapitest.FileSpec{Title: "new.jpg", Size: 5, Seed: 6})

	assert.Equal(t, "459 B", e.needs(e.options()), "11 + 13 + 30 + 5, and B's 400")
	onlyA := e.options()
	onlyA.Filter = filter.Set{Albums: filter.Albums{Include: []string{"A"}}}
	assert.Equal(t, "59 B", e.needs(onlyA), "B left out")
	b.Delete()
	assert.Equal(t, "59 B", e.needs(e.options()), "B deleted")

	o := e.options()
	o.FreeSpace = func(string) (int64, error) { return 59 + spaceMargin(59), nil }
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Zero(t, sum.Failed)
	e.same("A/changed.jpg", changed.Plaintext())
}
