package backup

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

func TestTheDateViewNeverTakesAnAlbumsFolder(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY", Zone: est}
	named := e.u.AddAlbum("By date")
	f := named.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1,
		CreationTime: time.Date(2020, 6, 1, 12, 0, 0, 0, time.UTC).UnixMicro()})
	e.mustRun()
	e.same("By date_1/x.jpg", f.Plaintext())
	assert.True(t, e.sameInode("By date/2020/x.jpg", "By date_1/x.jpg"))
}

func TestAnAlbumFolderInTheDateViewsWayIsMoved(t *testing.T) {
	e := newEnv(t)
	named := e.u.AddAlbum("By date")
	f := named.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1,
		CreationTime: time.Date(2020, 6, 1, 12, 0, 0, 0, time.UTC).UnixMicro()})
	e.mustRun()
	// A backup made before the name was kept for the date view.
	st, err := folder.At(e.dir).OpenState()
	require.NoError(t, err)
	c := mustCollection(t, st, named.ID)
	require.NoError(t, os.Rename(filepath.Join(e.dir, c.Folder), filepath.Join(e.dir, "By date")))
	c.Folder = "By date"
	require.NoError(t, st.PutCollection(c))
	require.NoError(t, st.Close())

	e.views = Views{DateView: "YYYY", Zone: est}
	sum := e.mustRun()
	assert.Zero(t, sum.New+sum.Failed)
	renamed := e.kinds(AlbumRenamed)
	require.Len(t, renamed, 1)
	assert.Equal(t, "By date_1", renamed[0].Path)
	e.same("By date_1/x.jpg", f.Plaintext())
	assert.True(t, e.sameInode("By date/2020/x.jpg", "By date_1/x.jpg"))
	assert.Equal(t, 1, e.downloads(), "moved, not downloaded again")
}

func mustCollection(t *testing.T, st *state.Store, id int64) *state.Collection {
	t.Helper()
	colls, err := st.Collections()
	require.NoError(t, err)
	require.Contains(t, colls, id)
	return colls[id]
}

func TestSomeoneElsesByDateFolderIsRefused(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "By date"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "By date", "notes.txt"), []byte("mine"), 0o644))
	e.views = Views{DateView: "YYYY", Zone: est}
	_, err := e.run()
	requireDirError(t, err, "that quak did not make")
	e.same("By date/notes.txt", []byte("mine"))
	assert.Zero(t, e.downloads(), "refused before anything was downloaded")

	require.NoError(t, os.Remove(filepath.Join(e.dir, "By date", "notes.txt")))
	e.mustRun() // an empty folder of that name is fine
	assert.Len(t, viewFiles(e), 1)
}

func TestTheDateViewCopiesWhereLinksAreRefused(t *testing.T) {
	hardLink = func(string, string) error { return &os.LinkError{Op: "link", Err: os.ErrPermission} }
	t.Cleanup(func() { hardLink = os.Link })
	e := newEnv(t)
	e.views = Views{DateView: "YYYY/MM/DD", XMP: true, Zone: est}
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 1000, Seed: 1,
		CreationTime: time.Date(2020, 6, 1, 3, 0, 0, 0, time.UTC).UnixMicro()})
	sum := e.mustRun()
	require.Zero(t, sum.Failed)
	view := "By date/2020/05/31/x.jpg"
	e.same(view, f.Plaintext())
	assert.False(t, e.sameInode(view, "A/x.jpg"), "a copy")
	assert.Equal(t, e.read("A/x.jpg.xmp"), e.read(view+".xmp"))
	ino, sideIno := e.inode(view), e.inode(view+".xmp")
	e.mustRun()
	assert.Equal(t, ino, e.inode(view), "a copy is not made again on every run")
	e.metadataOnly()
	assert.Empty(t, e.kinds(ViewsChanged), "a full look finds the copies in order")
	assert.Equal(t, ino, e.inode(view))
	assert.Equal(t, sideIno, e.inode(view+".xmp"), "a sidecar copy with the same bytes is left alone")
	f.Reupload([]byte("new bytes"))
	e.mustRun()
	e.same(view, []byte("new bytes"))
}

// The date view and the offsets of XMP times follow the time zone: a run
// in another one moves the files, downloading nothing.
func TestAnotherTimeZoneMovesTheDateView(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY/MM/DD", XMP: true, Zone: time.UTC}
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1,
		CreationTime: time.Date(2020, 1, 10, 2, 0, 0, 0, time.UTC).UnixMicro()})
	e.mustRun()
	require.True(t, e.exists("By date/2020/01/10/x.jpg"))
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "2020-01-10T02:00:00+00:00")

	e.views.Zone = est
	e.mustRun()
	assert.False(t, e.exists("By date/2020/01/10"))
	assert.True(t, e.sameInode("By date/2020/01/09/x.jpg", "A/x.jpg"))
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "2020-01-09T21:00:00-05:00")
	assert.Equal(t, 1, e.downloads())

	e.views.Zone = time.FixedZone("also EST, another name", -5*3600)
	e.mustRun()
	assert.Empty(t, e.kinds(ViewsChanged), "the same rules under another name change nothing")
	m, err := folder.At(e.dir).ReadViewOptions()
	require.NoError(t, err)
	assert.Equal(t, "also EST, another name", m.Zone, "status shows the new name")
}

// Two album folders in the date view's way (a case-sensitive file system
// allows both) are both moved.
func TestEveryAlbumFolderInTheDateViewsWayIsMoved(t *testing.T) {
	e := newEnv(t)
	one, two := e.u.AddAlbum("By date"), e.u.AddAlbum("BY DATE")
	f1 := one.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	f2 := two.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	e.mustRun()
	st, err := folder.At(e.dir).OpenState()
	require.NoError(t, err)
	for _, a := range []struct {
		id     int64
		folder string
	}{{one.ID, "By date"}, {two.ID, "BY DATE"}} {
		c := mustCollection(t, st, a.id)
		require.NoError(t, os.Rename(filepath.Join(e.dir, c.Folder), filepath.Join(e.dir, a.folder)))
		c.Folder = a.folder
		require.NoError(t, st.PutCollection(c))
	}
	require.NoError(t, st.Close())

	e.views = Views{DateView: "YYYY", Zone: est}
	sum := e.mustRun()
	assert.Zero(t, sum.Failed)
	assert.Len(t, e.kinds(AlbumRenamed), 2)
	e.same("By date_1/x.jpg", f1.Plaintext())
	e.same("BY DATE_2/y.jpg", f2.Plaintext())
	assert.False(t, e.exists("BY DATE"))
	assert.Len(t, viewFiles(e), 2)
}

// A file whose new content failed to download keeps its old copies, and
// its place in the date view; turning the date view off takes it out too.
func TestTurningTheDateViewOffTakesOutFailedFilesToo(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY", Zone: est}
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1,
		CreationTime: time.Date(2020, 6, 1, 12, 0, 0, 0, time.UTC).UnixMicro()})
	e.mustRun()
	f.Reupload([]byte("second version, never downloaded whole"))
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), enteapitest.Repeat(enteapitest.FlipAt(3), 10)...)
	sum := e.mustRun()
	require.Equal(t, 1, sum.Failed)
	require.True(t, e.exists("By date/2020/x.jpg"), "the old copy stays in the date view")

	e.views = Views{}
	sum = e.mustRun()
	require.Equal(t, 1, sum.Failed)
	assert.False(t, e.exists(DateViewDir), "the date view is gone, the failed file's place with it")
}

// Date folders left empty (say by a run killed while taking the date view
// down) go when it is turned off.
func TestEmptyDateFoldersGoWithTheDateView(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY", Zone: est}
	e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, DateViewDir, "1999"), 0o755))
	e.views = Views{}
	e.mustRun()
	assert.False(t, e.exists(DateViewDir))
}

// A file whose new version failed to download keeps its old copy and its
// date-view link, and the link moves when the date view's format changes.
func TestAChangedDateFormatMovesTheLinksOfFailedFiles(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY/MM", Zone: est}
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 20, Seed: 1, CreationTime: june})
	old := x.Plaintext()
	e.mustRun()
	view := filepath.Join(DateViewDir, "2024", "06", "x.jpg")
	x.Reupload([]byte("version two"))
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, x.ID), enteapitest.Repeat(enteapitest.Status(500), 8)...)
	require.Equal(t, 1, e.mustRun().Failed)
	e.same(view, old)

	e.views = Views{DateView: "YYYY", Zone: est}
	e.mustRun()
	assert.False(t, e.exists(view), "moved from the old format's folder")
	assert.True(t, e.exists(filepath.Join(DateViewDir, "2024", "x.jpg")))
}
