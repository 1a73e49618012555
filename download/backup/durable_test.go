package backup

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
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
func TestEveryFolderAFileLandsInIsSyncedBeforeItIsRecorded(t *testing.T) {
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
