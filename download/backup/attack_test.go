package backup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
)

// everyCopyIsItsOwn checks that each album copy and date-view link the
// state records holds the bytes of its own file.
func (e *env) everyCopyIsItsOwn(files ...*enteapitest.File) {
	e.t.Helper()
	st, err := folder.At(e.dir).OpenStateReadOnly()
	require.NoError(e.t, err)
	defer func() { _ = st.Close() }()
	colls, err := st.Collections()
	require.NoError(e.t, err)
	for _, f := range files {
		sf, err := st.File(f.ID)
		require.NoError(e.t, err)
		require.NotNil(e.t, sf, "file %d has no record", f.ID)
		for cid, en := range sf.Entries {
			e.same(filepath.Join(colls[cid].Folder, en.Name), f.Plaintext())
		}
		if sf.View != nil {
			e.same(filepath.Join(DateViewDir, sf.View.Folder, sf.View.Parts[0]), f.Plaintext())
		}
	}
}

func TestASwapOfTwoNamesKeepsBothFiles(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 100, Seed: 2, CreationTime: june})
	b.Add(x)
	b.Add(y)
	e.mustRun()
	x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "y.jpg" })
	y.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "x.jpg" })
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)
	x.Reupload([]byte("x two"))
	y.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "y.jpg" })
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)
	x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "x.jpg" })
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)

	// One file renamed to the name the other has, alone, then with new
	// content too: it gets a free name, the other stays.
	x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "y.jpg" })
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)
	e.same("A/y.jpg", y.Plaintext())
	y.Reupload([]byte("y two"))
	y.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "y_1.jpg" })
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)
	e.same("A/y_1.jpg", x.Plaintext())
}

// A saved file whose title is another's sidecar name is a file, not a
// sidecar: renaming the other never removes it.
func TestARenameNeverRemovesAFileNamedLikeItsSidecar(t *testing.T) {
	for _, suffix := range []string{".xmp", ".supplemental-metadata.json"} {
		t.Run(suffix, func(t *testing.T) {
			e := newEnv(t)
			e.views = allViews()
			a := e.u.AddAlbum("A")
			x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
			named := a.AddFile(enteapitest.FileSpec{Title: "x.jpg" + suffix, Data: []byte("a file"), CreationTime: june})
			e.mustRun()
			x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "z.jpg" })
			e.mustRun()
			e.everyCopyIsItsOwn(x, named)
			x.Reupload([]byte("x two"))
			x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "w.jpg" })
			e.mustRun()
			e.everyCopyIsItsOwn(x, named)
		})
	}
}

// A sidecar-named file quak did not write, beside a saved photo, is the
// user's: --xmp, --sidecars takeout, a rename, a switch of style and a
// prune never rewrite, move or remove it; quak's own sidecars (recorded)
// still come and go with the options.
func TestTheUsersOwnSidecarsAreNeverTouched(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 100, Seed: 2, CreationTime: june})
	e.views = Views{Sidecars: sidecars.None, Zone: est}
	e.mustRun()
	mine := map[string][]byte{
		"A/x.jpg.xmp":                        []byte("darktable's"),
		"A/x.jpg.supplemental-metadata.json": []byte(`{"title":"mine"}`),
		"A/.meta/z.jpg.json":                 []byte(`{"info":{"id":1}}`),
	}
	for p, b := range mine {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, p), b, 0o644))
	}
	check := func() {
		t.Helper()
		for p, b := range mine {
			e.same(p, b)
		}
	}
	e.views = allViews()
	e.mustRun()
	check()
	assert.NotEmpty(t, e.kinds(FileWarning), "a sidecar not written is reported")
	assert.True(t, e.exists("A/y.jpg.xmp"))
	assert.False(t, e.exists("By date/2024/06/x.jpg.xmp"), "the user's file is not linked into the date view")

	x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "z.jpg" })
	e.mustRun()
	check()
	e.everyCopyIsItsOwn(x, y)
	assert.False(t, e.exists("A/z.jpg"), "the name of another file's .meta sidecar is not taken")
	x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "x.jpg" })
	e.mustRun()
	check()

	e.views = Views{Sidecars: sidecars.None, Zone: est}
	e.mustRun()
	check()
	for _, p := range []string{"A/y.jpg.xmp", "A/y.jpg.supplemental-metadata.json", "A/x_1.jpg.xmp"} {
		assert.False(t, e.exists(p), "quak's own %s is left", p)
	}
	e.views = allViews()
	e.mustRun()
	check()
	x.Trash()
	y.Trash()
	_, err := e.prune(100)
	require.NoError(t, err)
	check()
	assert.True(t, e.exists(trashToday+"/A/y.jpg.xmp"))
	assert.False(t, e.exists(trashToday+"/A/x.jpg.xmp"))
	assert.False(t, e.exists(trashToday+"/A/x.jpg.supplemental-metadata.json"))
}

// A listing that carries a file twice (a broken or hostile server) saves it
// once, and an older entry of it never counts: the latest updationTime
// wins, so a stale deletion beside the live entry prunes nothing.
func TestAFileListedTwiceIsSavedOnce(t *testing.T) {
	for _, order := range []string{"stale first", "stale last", "exact copy", "same time, deletion first", "same time, deletion last"} {
		t.Run(order, func(t *testing.T) {
			e := newEnv(t)
			e.views = allViews()
			a := e.u.AddAlbum("A")
			x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
			live := a.AddFile(enteapitest.FileSpec{Title: "live.HEIC", FileType: 2, CreationTime: june,
				Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("motion"))})
			twice := func(_ int64, page []wire.File) []wire.File {
				var out []wire.File
				for _, f := range page {
					dup := f
					switch order {
					case "exact copy":
						out = append(out, f, dup)
						continue
					default:
						dup.IsDeleted, dup.UpdationTime = true, f.UpdationTime-1
						dup.EncryptedKey, dup.KeyDecryptionNonce = "", ""
					}
					if strings.HasPrefix(order, "same time") {
						dup.UpdationTime = f.UpdationTime // a tie: the live entry wins
					}
					if order == "stale first" || order == "same time, deletion first" {
						out = append(out, dup, f)
					} else {
						out = append(out, f, dup)
					}
				}
				return out
			}
			e.s.TamperDiff(twice)
			e.mustRun()
			assert.Equal(t, 2, e.downloads(), "each file is downloaded once")
			e.everyCopyIsItsOwn(x)
			e.same("A/live.heic", []byte("still"))
			e.same("A/live.mov", []byte("motion"))
			for _, p := range e.walk() {
				assert.NotContains(t, p, "_1", "a second copy: %s", p)
			}
			x.Edit(func(s *enteapitest.FileSpec) { s.Caption = "listed again" })
			live.Edit(func(s *enteapitest.FileSpec) { s.Caption = "listed again" })
			sum, err := e.prune(100)
			require.NoError(t, err)
			assert.Zero(t, sum.Pruned, "a stale entry pruned a live file")
			assert.Zero(t, sum.DeletedOnServer)
			e.everyCopyIsItsOwn(x)
			e.same("A/live.heic", []byte("still"))
			assert.Equal(t, 2, e.downloads())
		})
	}
}

// Takeout cuts its suffix on long names, so one sidecar name can belong to
// two files (NAME.EXT cut to NAME.EXT.s.json, and NAME.EXT.s uncut): it goes
// to neither, and no file's sidecar replaces another's.
func TestTwoFilesNeverShareATakeoutSidecar(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	long := strings.Repeat("n", 244) + ".jpg" // 248 bytes: its suffix is cut to ".s"
	x := a.AddFile(enteapitest.FileSpec{Title: long, Size: 100, Seed: 1, CreationTime: june})
	y := a.AddFile(enteapitest.FileSpec{Title: long + ".s", Size: 100, Seed: 2, CreationTime: june})
	shared := filepath.Join("A", long+".s.json")
	e.mustRun()
	e.everyCopyIsItsOwn(x, y)
	assert.False(t, e.exists(shared), "a sidecar two files would share")
	assert.Len(t, e.kinds(FileWarning), 2)
	assert.True(t, e.exists(filepath.Join("A", long+".xmp")))

	// A file titled as another's sidecar keeps its own bytes, and the
	// other gets no sidecar there.
	z := a.AddFile(enteapitest.FileSpec{Title: "z.jpg", Size: 100, Seed: 3, CreationTime: june})
	e.mustRun()
	w := a.AddFile(enteapitest.FileSpec{Title: "z.jpg.supplemental-metadata.json", Data: []byte("w's bytes"), CreationTime: june})
	v := a.AddFile(enteapitest.FileSpec{Title: "z.jpg.xmp", Data: []byte("v's bytes"), CreationTime: june})
	e.mustRun()
	z.Edit(func(s *enteapitest.FileSpec) { s.Caption = "edited" })
	e.mustRun()
	e.everyCopyIsItsOwn(x, y, z, w, v)
}

// quak's own folders are never reached through a symbolic link: a
// symlinked DIR/.quak/tmp, DIR/.quak/trash or DIR/.quak is refused with a
// DirError before anything is swept, and what the link points to is
// untouched.
func TestASymlinkedTempAreaOrTrashIsRefused(t *testing.T) {
	for _, link := range []string{".quak/tmp", ".quak/trash", folder.StateDir} {
		t.Run(link, func(t *testing.T) {
			e := newEnv(t)
			e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
			e.mustRun()
			outside := filepath.Join(t.TempDir(), "elsewhere")
			require.NoError(t, os.MkdirAll(filepath.Join(outside, "2000-01-01"), 0o755))
			victims := []string{filepath.Join(outside, "precious.jpg"), filepath.Join(outside, ".quak-tmp-precious"),
				filepath.Join(outside, "2000-01-01", "precious.jpg")}
			for _, v := range victims {
				require.NoError(t, os.WriteFile(v, []byte("keep"), 0o644))
			}
			p := filepath.Join(e.dir, link)
			if link == folder.StateDir {
				require.NoError(t, os.Rename(p, filepath.Join(outside, "moved")))
			} else {
				require.NoError(t, os.RemoveAll(p))
			}
			require.NoError(t, os.Symlink(outside, p))

			_, err := e.run()
			requireDirError(t, err, "symbolic link")
			_, err = EmptyTrash(e.dir, time.Now(), false)
			requireDirError(t, err, "symbolic link")
			for _, v := range victims {
				b, err := os.ReadFile(v)
				require.NoError(t, err, "%s was removed through the link", v)
				assert.Equal(t, "keep", string(b))
			}
		})
	}
}

// caseInsensitive models a case-insensitive file system's removal: a name
// removes the file whose name matches it regardless of case.
func caseInsensitive(t *testing.T) {
	t.Helper()
	prev := removeFile
	removeFile = func(path string) error {
		entries, err := os.ReadDir(filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, en := range entries {
			if strings.EqualFold(en.Name(), filepath.Base(path)) {
				return os.Remove(filepath.Join(filepath.Dir(path), en.Name()))
			}
		}
		return os.ErrNotExist
	}
	t.Cleanup(func() { removeFile = prev })
}

// A rename that changes only the case of a name (IMG.JPG to img.jpg) gives
// the file its new name and never removes it as the "old" one, on a
// case-sensitive file system and on one that is not.
func TestACaseOnlyRenameKeepsTheFile(t *testing.T) {
	for _, fs := range []string{"case-sensitive", "case-insensitive"} {
		t.Run(fs, func(t *testing.T) {
			if fs == "case-insensitive" {
				caseInsensitive(t)
			}
			e := newEnv(t)
			e.views = allViews()
			a := e.u.AddAlbum("A")
			x := a.AddFile(enteapitest.FileSpec{Title: "IMG.JPG", Size: 100, Seed: 1, CreationTime: june})
			live := a.AddFile(enteapitest.FileSpec{Title: "LIVE.HEIC", FileType: 2, CreationTime: june,
				Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("motion"))})
			e.mustRun()
			e.same("A/LIVE.heic", []byte("still"))
			x.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "img.jpg" })
			live.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "live.HEIC" })
			e.mustRun()
			e.everyCopyIsItsOwn(x)
			e.same("A/img.jpg", x.Plaintext())
			e.same("A/live.heic", []byte("still"))
			e.same("A/live.mov", []byte("motion"))
			want := []string{"A/.meta/album_meta.json", "A/img.jpg", "A/img.jpg.supplemental-metadata.json", "A/img.jpg.xmp",
				"A/live.heic", "A/live.heic.supplemental-metadata.json", "A/live.heic.xmp",
				"A/live.mov", "A/live.mov.supplemental-metadata.json", "A/live.mov.xmp", "A/" + sidecars.TakeoutAlbumFile}
			var got []string
			for _, p := range e.walk() {
				if !strings.HasPrefix(p, DateViewDir) {
					got = append(got, p)
				}
			}
			assert.ElementsMatch(t, want, got)
			assert.True(t, e.sameInode("By date/2024/06/img.jpg", "A/img.jpg"))
			assert.Equal(t, 2, e.downloads(), "nothing downloaded again")
		})
	}
}

// A long name pruned again on the same day gets a trash name that still
// fits a file name (255 bytes) and is unique, with links or without.
func TestLongNamesInTheTrashFitAndStayUnique(t *testing.T) {
	t.Run("links", testLongNamesInTheTrash)
	t.Run("no links", func(t *testing.T) {
		refuseLinks(t)
		testLongNamesInTheTrash(t)
	})
}

func testLongNamesInTheTrash(t *testing.T) {
	t.Helper()
	// 250 bytes, the longest name quak gives: with an extension, and
	// without one, so the cut falls inside a character.
	for _, title := range []string{strings.Repeat("é", 123) + ".jpg", strings.Repeat("é", 125)} {
		t.Run(fmt.Sprintf("%d bytes, ext %q", len(title), filepath.Ext(title)), func(t *testing.T) { longNameInTheTrash(t, title) })
	}
}

func longNameInTheTrash(t *testing.T, title string) {
	t.Helper()
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.Takeout, XMP: true, Zone: est}
	a := e.u.AddAlbum("A")
	var saved [][]byte
	for i := range 3 {
		f := a.AddFile(enteapitest.FileSpec{Title: title, Size: 10, Seed: byte(i + 1)})
		e.mustRun()
		f.Trash()
		sum, err := e.prune(100)
		require.NoError(t, err)
		require.Equal(t, 1, sum.Pruned)
		saved = append(saved, f.Plaintext())
	}
	entries, err := os.ReadDir(filepath.Join(e.dir, trashToday, "A"))
	require.NoError(t, err)
	found := map[string]bool{}
	for _, en := range entries {
		assert.LessOrEqual(t, len(en.Name()), 255, en.Name())
		assert.True(t, utf8.ValidString(en.Name()), "a character was cut: %q", en.Name())
		if !en.IsDir() {
			b, err := os.ReadFile(filepath.Join(e.dir, trashToday, "A", en.Name()))
			require.NoError(t, err)
			for i, s := range saved {
				if string(b) == string(s) {
					found[fmt.Sprint(i)] = true
				}
			}
		}
	}
	assert.Len(t, found, 3, "each pruned file is in the trash")
	assert.Len(t, entries, 3*3, "3 files, their XMP and Takeout sidecars")
}

// A copy in another album that cannot be refreshed with a file's new
// content (here a folder sits at its name, so neither a link nor a copy
// can take it) is a counted failure naming the file, the album and the
// cause; the next run tries again, without downloading, and the date view
// never links to the stale copy.
func TestAFailedRelinkIsCountedAndRetried(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY/MM", Zone: est}
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	b.Add(x)
	e.mustRun()
	blocker := e.blockWithFolder(filepath.Join("B", "x.jpg"))

	x.Reupload([]byte("version two"))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Failed, "the copy not refreshed is a failure")
	require.Len(t, sum.Failures, 1)
	assert.Equal(t, x.ID, sum.Failures[0].FileID)
	assert.Equal(t, "B", sum.Failures[0].Album)
	assert.Contains(t, sum.Failures[0].Error, "x.jpg")
	assert.Equal(t, map[string]int{sum.Failures[0].Reason: 1}, sum.Reasons, "its reason is counted with the others")
	e.same("A/x.jpg", []byte("version two"))
	e.same("By date/2024/06/x.jpg", []byte("version two"))
	downloads := e.downloads()

	sum = e.mustRun()
	assert.Equal(t, 1, sum.Failed, "tried again, and failed again")
	assert.Equal(t, downloads, e.downloads(), "tried without downloading")

	// A second stale copy: one run refreshes both.
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 100, Seed: 2, CreationTime: june})
	b.Add(y)
	e.mustRun()
	blockerY := e.blockWithFolder(filepath.Join("B", "y.jpg"))
	y.Reupload([]byte("y's version two"))
	assert.Equal(t, 2, e.mustRun().Failed)
	downloads = e.downloads()

	require.NoError(t, os.RemoveAll(blocker))
	require.NoError(t, os.RemoveAll(blockerY))
	sum = e.mustRun()
	assert.Zero(t, sum.Failed)
	e.same("B/x.jpg", []byte("version two"))
	e.same("B/y.jpg", []byte("y's version two"))
	assert.True(t, e.sameInode("A/x.jpg", "B/x.jpg"))
	assert.True(t, e.sameInode("A/y.jpg", "B/y.jpg"))
	assert.Equal(t, downloads, e.downloads(), "nothing downloaded again")
	sum = e.mustRun()
	assert.Zero(t, sum.Failed)
}

// A .meta JSON that names another file's id, at the name of a pruned
// copy's sidecar, is not quak's: it stays where it is.
func TestPruneLeavesAnotherFilesMetaJSON(t *testing.T) {
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.None, Zone: est}
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	other := []byte(`{"info":{"id":1,"fileNames":["x.jpg"]}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A", ".meta", "x.jpg.json"), other, 0o644))
	x.Trash()
	sum, err := e.prune(100)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned)
	assert.True(t, e.exists(trashToday+"/A/x.jpg"))
	e.same("A/.meta/x.jpg.json", other)
	assert.False(t, e.exists(trashToday+"/A/.meta/x.jpg.json"))
}

// A file saved with a hash mismatch (its bytes are the server's, the hash
// it announces is not theirs) whose copy in another album could not be
// refreshed has that copy refreshed by the next run, as a saved file's.
func TestAStaleCopyOfAMismatchedFileIsRefreshed(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	b.Add(x)
	e.mustRun()
	blocker := e.blockWithFolder(filepath.Join("B", "x.jpg"))
	x.Reupload([]byte("version two"))
	x.Edit(func(s *enteapitest.FileSpec) { s.Hash = "Ym9ndXMgaGFzaA==" })
	sum := e.mustRun()
	require.Equal(t, 1, sum.HashMismatches)
	require.Equal(t, 1, sum.Failed, "the copy in B")
	downloads := e.downloads()

	require.NoError(t, os.RemoveAll(blocker))
	assert.Zero(t, e.mustRun().Failed)
	e.same("B/x.jpg", []byte("version two"))
	assert.Equal(t, downloads, e.downloads(), "nothing downloaded again")
}

// blockWithFolder puts a folder, not empty, in the place of the saved file
// at rel: neither a link nor a copy can take its name. It returns the
// folder's path.
func (e *env) blockWithFolder(rel string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	require.NoError(e.t, os.Remove(p))
	require.NoError(e.t, os.MkdirAll(filepath.Join(p, "in the way"), 0o755))
	return p
}
