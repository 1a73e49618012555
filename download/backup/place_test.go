package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
)

func TestLockKeepsRunsApart(t *testing.T) {
	e := newEnv(t)
	f, err := folder.Prepare(e.dir, folder.Use{})
	require.NoError(t, err)
	unlock, err := f.Lock()
	require.NoError(t, err)
	_, err = e.run()
	assert.ErrorIs(t, err, ErrLocked)
	unlock()
	e.mustRun()
}

func TestUnusableFolders(t *testing.T) {
	e := newEnv(t)
	e.mustRun()
	other := e.s.AddUser("other@example.org", "pw", enteapitest.UserOptions{})
	o := e.options()
	o.Keys.UserID = other.ID
	_, err := Run(context.Background(), o)
	var de *DirError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), fmt.Sprintf("is the backup of me@example.org (user %d), not of me@example.org (user %d)", e.u.ID, other.ID))

	o = e.options()
	o.Dir = filepath.Join(e.dir, "missing")
	_, err = Run(context.Background(), o)
	require.ErrorAs(t, err, &de)

	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(t.TempDir(), "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		o.Dir = ro
		_, err = Run(context.Background(), o)
		require.ErrorAs(t, err, &de)
	}
}

func TestAdoptsAnEnteExportFolder(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Holidays")
	f := a.AddFile(enteapitest.FileSpec{Title: "beach.jpg", Size: 1000, Seed: 1})
	g := a.AddFile(enteapitest.FileSpec{Title: "corrupt.jpg", Size: 1000, Seed: 2})
	// What `ente export` left: the album folder, its files and sidecars.
	folder := filepath.Join(e.dir, "Holidays")
	require.NoError(t, os.MkdirAll(filepath.Join(folder, ".meta"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(folder, ".meta", "album_meta.json"),
		[]byte(fmt.Sprintf(`{"id":%d,"albumName":"Holidays"}`, a.ID)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(folder, "beach.jpg"), f.Plaintext(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(folder, "corrupt.jpg"), []byte("damaged"), 0o644))
	for _, x := range []*enteapitest.File{f, g} {
		name := map[int64]string{f.ID: "beach.jpg", g.ID: "corrupt.jpg"}[x.ID]
		sc := fmt.Sprintf(`{"title":%q,"info":{"id":%d,"fileNames":[%q]}}`, name, x.ID, name)
		require.NoError(t, os.WriteFile(filepath.Join(folder, ".meta", name+".json"), []byte(sc), 0o644))
	}
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Adopted)
	assert.Equal(t, 1, sum.New, "the damaged copy is downloaded again")
	assert.Equal(t, 1, e.downloads())
	e.same("Holidays/corrupt.jpg", g.Plaintext())
	e.same("Holidays/beach.jpg", f.Plaintext())
}

func TestForeignFolderIsNotClobbered(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "Photos"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "Photos", "mine.jpg"), []byte("not quak's"), 0o644))
	a := e.u.AddAlbum("Photos")
	f := a.AddFile(enteapitest.FileSpec{Title: "mine.jpg", Size: 10, Seed: 1})
	e.mustRun()
	assert.Equal(t, []byte("not quak's"), e.read("Photos/mine.jpg"))
	e.same("Photos_1/mine.jpg", f.Plaintext())
}

func TestHashMismatchIsKeptAndReported(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("data"), Hash: "AAAA"})
	sum := e.mustRun()
	assert.Equal(t, 1, sum.HashMismatches)
	assert.Zero(t, sum.Failed)
	e.same("A/x.jpg", f.Plaintext())
	var sc sidecarFile
	require.NoError(t, json.Unmarshal(e.read("A/.meta/x.jpg.json"), &sc))
	assert.Equal(t, "mismatch", sc.Quak.HashCheck)
	// Not retried: a second run downloads nothing, and counts it as kept.
	n := e.downloads()
	sum = e.mustRun()
	assert.Equal(t, n, e.downloads())
	assert.Equal(t, 1, sum.Unchanged)
	assert.Equal(t, 1, sum.TotalFiles)
	assert.Equal(t, int64(len("data")), sum.TotalBytes)
}

func TestMissingLocalCopyIsRestored(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	b.Add(f)
	e.mustRun()
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A/x.jpg")))
	f.Edit(func(*enteapitest.FileSpec) {}) // bumps the file; local copy in A is missing
	sum := e.mustRun()
	e.same("A/x.jpg", f.Plaintext())
	assert.Equal(t, 1, sum.LocalRestored, "the missing copy is downloaded again")
	assert.Zero(t, sum.New)
	assert.Zero(t, sum.Linked)
}

func TestKeepsGoingWhenHardLinksAreImpossible(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.WriteFile(src, []byte("content"), 0o644))
	dst := filepath.Join(t.TempDir(), "dst")
	require.NoError(t, copyFile(src, dst))
	b, err := os.ReadFile(dst)
	require.NoError(t, err)
	assert.Equal(t, []byte("content"), b)
	assert.True(t, errors.Is(copyFile(src, dst), os.ErrExist) || errors.Is(copyFile(src, dst), syscall.EEXIST))
}

// refuseLinks makes hard links fail as on a file system without them, for
// the rest of the test.
func refuseLinks(t *testing.T) {
	t.Helper()
	hardLink = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	t.Cleanup(func() { hardLink = os.Link })
}

// On a file system that cannot hard-link, the second album gets a copy,
// recorded as one, and the run succeeds.
func TestCopiesWhenTheFileSystemCannotLink(t *testing.T) {
	refuseLinks(t)
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 1000, Seed: 4})
	b.Add(f)
	sum := e.mustRun()
	assert.Equal(t, 1, sum.New)
	assert.Equal(t, 1, sum.Linked)
	assert.Zero(t, sum.Failed)
	e.same("A/x.jpg", f.Plaintext())
	e.same("B/x.jpg", f.Plaintext())
	fa, err := os.Stat(filepath.Join(e.dir, "A/x.jpg"))
	require.NoError(t, err)
	fb, err := os.Stat(filepath.Join(e.dir, "B/x.jpg"))
	require.NoError(t, err)
	assert.False(t, os.SameFile(fa, fb), "a copy, not a link")
	assert.Equal(t, 1, e.downloads(), "copied locally, never downloaded twice")
	rec := e.fileState(f.ID)
	assert.True(t, rec.Entries[b.ID].Copy != rec.Entries[a.ID].Copy, "the copy is recorded as one, so verify does not call it unlinked")
}

func TestPlainSize(t *testing.T) {
	for _, n := range []int64{0, 1, 4<<20 - 1, 4 << 20, 4<<20 + 1, 3 * (4 << 20)} {
		assert.Equal(t, n, plainSize(secretstream.CiphertextSize(n)), "n=%d", n)
	}
}

func TestUpdationBumpAloneDownloadsNothing(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	n := e.downloads()
	f.Edit(func(*enteapitest.FileSpec) {}) // e.g. a new thumbnail: the file is bumped, nothing of it changed
	sum := e.mustRun()
	assert.Equal(t, n, e.downloads())
	assert.Zero(t, sum.New+sum.Updated+sum.Linked)
	assert.Equal(t, 1, sum.Unchanged)
}

func TestNewContentIsDownloadedAndEveryCopyRefreshed(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("first version")})
	b.Add(f)
	e.mustRun()
	f.Reupload([]byte("second, longer version"))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.New)
	assert.Zero(t, sum.Failed)
	e.same("A/x.jpg", []byte("second, longer version"))
	e.same("B/x.jpg", []byte("second, longer version"))
	assert.Equal(t, 2, e.downloads(), "one download per version, not per album")
}
