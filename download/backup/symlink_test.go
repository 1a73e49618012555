package backup

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// tree is what a folder holds: each path's kind, bytes and mtime.
type tree map[string]string

func outsideTree(t *testing.T, root string) tree {
	t.Helper()
	out := tree{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = "dir " + fi.ModTime().UTC().Format(time.RFC3339Nano)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file " + fi.ModTime().UTC().Format(time.RFC3339Nano) + " " + string(b)
		}
		return nil
	}))
	return out
}

// copyTree copies src (a file or a folder) to dst, keeping mtimes.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	}))
}

// linkedLibrary is a backup with every kind of thing quak writes: two
// albums sharing a photo, a live photo, XMP and Takeout sidecars and the
// date view; edit changes it on the server as a later run would find it.
func linkedLibrary(t *testing.T) (e *env, x *enteapitest.File, edit func()) {
	t.Helper()
	e = newEnv(t)
	e.views = allViews()
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	x = a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 40, Seed: 1, CreationTime: june})
	b.Add(x)
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 40, Seed: 2, CreationTime: june})
	a.AddFile(enteapitest.FileSpec{Title: "IMG_1.HEIC", FileType: 2, CreationTime: june,
		Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("moving"))})
	e.mustRun()
	return e, x, func() {
		x.Edit(func(s *enteapitest.FileSpec) {
			s.Title, s.Caption = "x2.jpg", "a caption"
			s.CreationTime = time.Date(2023, 3, 3, 12, 0, 0, 0, time.UTC).UnixMicro()
		})
		y.Trash()
		a.AddFile(enteapitest.FileSpec{Title: "z.jpg", Size: 40, Seed: 3, CreationTime: june})
	}
}

// Issue 31: a symbolic link planted anywhere under DIR, in place of a
// folder or a file quak made, never makes quak write, link, remove or set
// a time outside DIR, whatever the next run does (edits, new files,
// views, prune).
func TestASymlinkAnywhereNeverLeadsOut(t *testing.T) {
	e, _, _ := linkedLibrary(t)
	var paths []string
	for rel := range outsideTree(t, e.dir) {
		if rel != "." && rel != folder.StateDir && !strings.HasPrefix(rel, folder.StateDir+string(filepath.Separator)) {
			paths = append(paths, rel)
		}
	}
	sort.Strings(paths)
	require.Greater(t, len(paths), 20, "the library has folders, photos, sidecars and a date view")
	for _, rel := range paths {
		t.Run(rel, func(t *testing.T) {
			e, _, edit := linkedLibrary(t)
			outside := filepath.Join(t.TempDir(), "outside")
			p := filepath.Join(e.dir, rel)
			copyTree(t, p, outside)
			require.NoError(t, os.RemoveAll(p))
			require.NoError(t, os.Symlink(outside, p))
			before := outsideTree(t, outside)
			edit()
			_, _ = e.prune(100)
			_, _ = e.run()
			assert.Equal(t, before, outsideTree(t, outside), "what the link points to is untouched")
		})
	}
}

// A date view whose folder is a link elsewhere is refused before anything
// is written, as quak's own folders are.
func TestADateViewFolderThatIsALinkIsRefused(t *testing.T) {
	e := newEnv(t)
	e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1, CreationTime: june})
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(e.dir, DateViewDir)))
	e.views = allViews()
	_, err := e.run()
	requireDirError(t, err, "symbolic link")
	left, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// A photo replaced by a link to a file elsewhere is never followed: its
// date is never set through the link, the date view never links to what
// it points to, and the file's next download replaces the link with the
// photo itself, so the backup heals.
func TestAPhotoReplacedByALinkIsNeverFollowedAndHeals(t *testing.T) {
	e, x, _ := linkedLibrary(t)
	outsideFile := filepath.Join(t.TempDir(), "x.jpg")
	copyTree(t, filepath.Join(e.dir, "A", "x.jpg"), outsideFile)
	before := outsideTree(t, filepath.Dir(outsideFile))
	for _, rel := range []string{"A/x.jpg", "B/x.jpg"} {
		require.NoError(t, os.Remove(filepath.Join(e.dir, rel)))
		require.NoError(t, os.Symlink(outsideFile, filepath.Join(e.dir, rel)))
	}
	x.Edit(func(s *enteapitest.FileSpec) {
		s.CreationTime = time.Date(2023, 3, 3, 12, 0, 0, 0, time.UTC).UnixMicro()
	})
	_, err := e.run()
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(e.kinds(FileFailed)), "symbolic link", "the link is named")
	_, err = e.run()
	require.NoError(t, err)
	assert.Zero(t, e.mustRun().Failed)
	assert.Equal(t, before, outsideTree(t, filepath.Dir(outsideFile)), "the outside file is untouched")
	for _, rel := range []string{"A/x.jpg", "B/x.jpg"} {
		fi, err := os.Lstat(filepath.Join(e.dir, rel))
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), "%s is the photo again", rel)
		e.same(rel, x.Plaintext())
	}
	_ = filepath.WalkDir(filepath.Join(e.dir, DateViewDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			assert.False(t, sameFile(p, outsideFile), "%s links to the outside file", p)
		}
		return nil
	})
}
