package backup

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
)

// recordSyncs makes the runs' folder fsyncs list the folders they sync.
func recordSyncs(t *testing.T) func() map[string]int {
	t.Helper()
	var mu sync.Mutex
	synced := map[string]int{}
	real := syncDir
	syncDir = func(d string) error {
		mu.Lock()
		synced[d]++
		mu.Unlock()
		return real(d)
	}
	t.Cleanup(func() { syncDir = real })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		got := map[string]int{}
		for k, v := range synced {
			got[k] = v
		}
		return got
	}
}

// A file's name is durable only once the folder holding it is synced, and
// a new folder's once its parent is. The commit that records a file first
// syncs every folder on its path that the run changed: the album folder a
// photo (or a live photo's parts) was renamed into, its .meta, and the
// backup folder that a new album folder was made in. Each is synced once
// per commit, not once per file.
func TestEveryFolderAFileLandsInIsSyncedByItsCommit(t *testing.T) {
	for _, style := range []sidecars.Style{sidecars.Ente, sidecars.None} {
		t.Run(string(style), func(t *testing.T) {
			synced := recordSyncs(t)
			e := newEnv(t)
			e.views = Views{Sidecars: style}
			a := e.u.AddAlbum("Holidays")
			for i := 0; i < 5; i++ {
				a.AddFile(enteapitest.FileSpec{Title: string(rune('a'+i)) + ".jpg", Size: 100, Seed: byte(i)})
			}
			live := e.u.AddAlbum("Live")
			live.AddFile(enteapitest.FileSpec{Title: "IMG_1.HEIC", FileType: 2,
				Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("moving"))})
			sum := e.mustRun()
			require.Equal(t, 6, sum.New)
			got := synced()
			for _, d := range []string{e.dir, filepath.Join(e.dir, "Holidays"), filepath.Join(e.dir, "Live"),
				filepath.Join(e.dir, "Holidays", ".meta")} {
				assert.Positive(t, got[d], "%s never synced", d)
			}
			// 5 photos in pages of 3: two commits of Holidays' files, not five syncs.
			assert.LessOrEqual(t, got[filepath.Join(e.dir, "Holidays")], 3, "one sync per commit, not per file")

			// Into folders that exist: only the files' own renames change them.
			synced = recordSyncs(t)
			a.AddFile(enteapitest.FileSpec{Title: "later.jpg", Size: 100, Seed: 9})
			live.AddFile(enteapitest.FileSpec{Title: "IMG_2.HEIC", FileType: 2,
				Data: enteapitest.LivePhoto("heic", []byte("still 2"), "mov", []byte("moving 2"))})
			require.Equal(t, 2, e.mustRun().New)
			got = synced()
			for _, d := range []string{filepath.Join(e.dir, "Holidays"), filepath.Join(e.dir, "Live")} {
				assert.Positive(t, got[d], "%s never synced", d)
			}
		})
	}
}

// A prune moves a file into DIR/.quak/trash/DAY/ALBUM: the trash copy may
// be the only one left, so the new folders on its way are synced in their
// parents by the commit that records where it went.
func TestATrashedFilesNewFoldersAreSyncedByItsCommit(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "keep.jpg", Size: 10, Seed: 1})
	f := a.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Size: 10, Seed: 2})
	e.mustRun()
	f.Trash()
	synced := recordSyncs(t)
	sum, err := e.prune(100)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Pruned)
	require.True(t, e.exists(filepath.Join(trashToday, "A", "gone.jpg")))
	got := synced()
	for _, d := range []string{
		filepath.Join(e.dir, "A"),             // the name left it
		filepath.Join(e.dir, trashToday, "A"), // the name arrived in it
		filepath.Join(e.dir, trashToday),      // holds the new folder A
		folder.At(e.dir).Trash(),              // holds the new folder DAY
		folder.At(e.dir).StateDir(),           // holds the new folder trash
	} {
		assert.Positive(t, got[d], "%s never synced", d)
	}
}

// Turning the date view on for a backup makes By date/YYYY/MM: each new
// folder is synced in its parent by the commit that records the links.
func TestNewDateViewFoldersAreSyncedInTheirParents(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "p.jpg", Size: 10, Seed: 1,
		CreationTime: time.Date(2024, 5, 6, 7, 0, 0, 0, time.UTC).UnixMicro()})
	e.mustRun()
	synced := recordSyncs(t)
	e.views = Views{DateView: "YYYY/MM", Zone: time.UTC}
	e.mustRun()
	require.True(t, e.exists(filepath.Join(DateViewDir, "2024", "05", "p.jpg")))
	got := synced()
	for _, d := range []string{filepath.Join(e.dir, DateViewDir, "2024"), filepath.Join(e.dir, DateViewDir), e.dir} {
		assert.Positive(t, got[d], "%s never synced", d)
	}
}

// A folder removed while the run fills it fails that album's commit with
// an error that says so, and nothing is recorded; the next run downloads
// the album again.
func TestAFolderRemovedBeforeItsCommitFailsTheAlbumAndSaysWhy(t *testing.T) {
	e := newEnv(t)
	spec := enteapitest.FileSpec{Title: "p.jpg", Size: 10, Seed: 1}
	e.u.AddAlbum("A").AddFile(spec)
	real := syncDir
	removed := false
	syncDir = func(d string) error {
		if !removed && filepath.Base(d) == "A" {
			removed = true
			require.NoError(t, os.RemoveAll(d))
		}
		return real(d)
	}
	t.Cleanup(func() { syncDir = real })
	_, err := e.run()
	require.NoError(t, err)
	failed := e.kinds(AlbumFailed)
	require.Len(t, failed, 1)
	assert.Contains(t, failed[0].Err.Error(), "syncing a folder before recording what is in it")
	syncDir = real
	assert.Equal(t, 1, e.mustRun().New, "downloaded again")
	want, err := io.ReadAll(enteapitest.Content(spec.Size, spec.Seed))
	require.NoError(t, err)
	e.same(filepath.Join("A", "p.jpg"), want)
}
