package backup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/sidecars"
)

// june is a creation time whose date-view folder is 2024/06 in every zone
// of these tests.
var june = time.Date(2024, 6, 15, 12, 0, 0, 0, time.UTC).UnixMicro()

// partSidecars are the XMP and Takeout sidecars allViews keeps for a part.
func partSidecars(part string) []string {
	return []string{sidecars.XMPName(part), sidecars.TakeoutName(part)}
}

// An album shared with the account, saved with --xmp --sidecars takeout
// --date-view, unshared, pruned and shared again comes back whole: its
// parts moved back from the trash, their XMP and Takeout sidecars with
// them (moved back when the trash has them, written again otherwise), and
// its place in the date view.
func TestAReSharedAlbumComesBackWithItsSidecarsAndDateView(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lose runs between the prune and the share: what the user did to
		// the trash, or to the options.
		lose func(e *env)
		// restored: moved back from the trash, not downloaded; xmp: the
		// options keep XMP at the end.
		restored, xmp bool
	}{
		{name: "sidecars in the trash", restored: true, xmp: true},
		{name: "sidecars gone from the trash", restored: true, xmp: true, lose: func(e *env) {
			for _, part := range []string{"a.jpg", "b.heic", "b.mov"} {
				for _, name := range partSidecars(part) {
					require.NoError(t, os.Remove(filepath.Join(e.dir, trashToday, "Trip", name)))
				}
			}
		}},
		{name: "trash emptied", xmp: true, lose: func(e *env) {
			_, err := EmptyTrash(e.dir, pruneDay.AddDate(0, 1, 0), false)
			require.NoError(t, err)
		}},
		{name: "xmp turned off meanwhile", restored: true, lose: func(e *env) {
			e.views.XMP = false
			e.mustRun()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.views = allViews()
			bob := e.s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
			trip := bob.AddAlbum("Trip")
			a := trip.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 100, Seed: 1, CreationTime: june, Caption: "the lake"})
			e.s.Advance(24 * time.Hour)
			trip.AddFile(enteapitest.FileSpec{Title: "b.heic", FileType: 2, CreationTime: june,
				Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("moving"))})
			trip.ShareWith(e.u, "VIEWER")
			e.mustRun()
			require.True(t, e.sameInode("By date/2024/06/a.jpg", "Trip/a.jpg"))
			xmpBytes := e.read("Trip/a.jpg.xmp")

			e.s.Advance(24 * time.Hour)
			trip.Unshare(e.u)
			sum, err := e.prune(100)
			require.NoError(t, err)
			require.Equal(t, 2, sum.Pruned)
			assert.False(t, e.exists("Trip"), "a pruned album's folder, Takeout's metadata.json and all, goes")
			assert.False(t, e.exists("By date"), "pruned files leave the date view")
			trashed := map[string]uint64{} // the Takeout files, which say nothing of albums
			for _, part := range []string{"a.jpg", "b.heic", "b.mov"} {
				for _, name := range partSidecars(part) {
					p := trashToday + "/Trip/" + name
					require.True(t, e.exists(p), "%s is not in the trash", p)
				}
				trashed[sidecars.TakeoutName(part)] = e.inode(trashToday + "/Trip/" + sidecars.TakeoutName(part))
			}
			assert.True(t, e.exists(trashToday+"/Trip/"+sidecars.TakeoutAlbumFile))
			if tc.lose != nil {
				tc.lose(e)
			}

			trip.ShareWith(e.u, "VIEWER")
			downloads := e.downloads()
			sum = e.mustRun()
			e.same("Trip/a.jpg", a.Plaintext())
			assert.Equal(t, []byte("still"), e.read("Trip/b.heic"))
			assert.Equal(t, []byte("moving"), e.read("Trip/b.mov"))
			if tc.restored {
				assert.Equal(t, 2, sum.Restored)
				assert.Equal(t, downloads, e.downloads(), "moved back from the trash, not downloaded")
			} else {
				assert.Equal(t, 2, sum.New)
			}
			for _, part := range []string{"a.jpg", "b.heic", "b.mov"} {
				assert.True(t, e.sameInode("By date/2024/06/"+part, "Trip/"+part), "%s is not back in the date view", part)
				tk := e.takeout("Trip/" + sidecars.TakeoutName(part))
				assert.Equal(t, time.UnixMicro(june).Unix(), tk.Taken.Unix())
				assert.True(t, e.sameInode("By date/2024/06/"+sidecars.TakeoutName(part), "Trip/"+sidecars.TakeoutName(part)))
				assert.Equal(t, tc.xmp, e.exists("Trip/"+sidecars.XMPName(part)), "%s's XMP", part)
				assert.Equal(t, tc.xmp, e.exists("By date/2024/06/"+sidecars.XMPName(part)), "%s's XMP in the date view", part)
				for _, name := range partSidecars(part) {
					assert.False(t, e.exists(trashToday+"/Trip/"+name), "%s lingers in the trash", name)
				}
			}
			assert.True(t, e.exists("Trip/"+sidecars.TakeoutAlbumFile))
			if tc.xmp {
				assert.Equal(t, xmpBytes, e.read("Trip/a.jpg.xmp"), "the album is a keyword again")
			}
			if tc.name == "sidecars in the trash" {
				for name, ino := range trashed {
					assert.Equal(t, ino, e.inode("Trip/"+name), "%s was not moved back from the trash", name)
				}
			}

			xmpIno, viewIno := e.inode("Trip/"+sidecars.TakeoutName("a.jpg")), e.inode("By date/2024/06/a.jpg")
			again := e.mustRun()
			assert.Zero(t, again.New+again.Restored+again.Updated)
			assert.Equal(t, xmpIno, e.inode("Trip/"+sidecars.TakeoutName("a.jpg")), "written again by the next run")
			assert.Equal(t, viewIno, e.inode("By date/2024/06/a.jpg"))
			e.noTemps()
		})
	}
}

// A file taken out of an album and pruned, then put back, comes back with
// its sidecars from the trash and takes its place in the date view again.
func TestAFileThatReappearsComesBackWithItsSidecarsAndDateView(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	a.AddFile(enteapitest.FileSpec{Title: "stays.jpg", Size: 100, Seed: 2, CreationTime: june})
	e.mustRun()
	e.s.Advance(24 * time.Hour)
	a.Remove(f)
	_, err := e.prune(100)
	require.NoError(t, err)
	assert.False(t, e.exists("By date/2024/06/x.jpg"))
	assert.False(t, e.exists("By date/2024/06/x.jpg.xmp"))
	ino := e.inode(trashToday + "/A/x.jpg.supplemental-metadata.json")
	xmp := e.read(trashToday + "/A/x.jpg.xmp")

	e.s.Advance(24 * time.Hour)
	a.Add(f)
	downloads := e.downloads()
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Restored)
	assert.Equal(t, downloads, e.downloads())
	e.same("A/x.jpg", f.Plaintext())
	assert.Equal(t, ino, e.inode("A/x.jpg.supplemental-metadata.json"), "the Takeout file was not moved back from the trash")
	assert.NotEqual(t, xmp, e.read("A/x.jpg.xmp"), "the XMP moved back names the album again")
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "<rdf:li>A</rdf:li>")
	assert.True(t, e.sameInode("By date/2024/06/x.jpg", "A/x.jpg"))
	assert.True(t, e.sameInode("By date/2024/06/x.jpg.xmp", "A/x.jpg.xmp"))
	assert.True(t, e.exists("A/x.jpg.supplemental-metadata.json"))
	assert.False(t, e.exists(trashToday+"/A/x.jpg.xmp"))
	assert.False(t, e.exists(trashToday+"/A/x.jpg.supplemental-metadata.json"))
}

// With --xmp --sidecars takeout --date-view, --prune moves quak's own files
// and nothing else: each pruned copy's parts and sidecars and a deleted
// album's metadata.json, never a saved file that has a sidecar's name nor
// the user's files; --max-delete counts album copies, not their sidecars.
func TestPruneWithViewsMovesOnlyQuaksFiles(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1, CreationTime: june})
	named := a.AddFile(enteapitest.FileSpec{Title: "x.jpg.xmp", Data: []byte("a file, not x.jpg's sidecar"), CreationTime: june})
	gone := e.u.AddAlbum("Gone")
	gone.AddFile(enteapitest.FileSpec{Title: "0.jpg", Size: 10, Seed: 2, CreationTime: june})
	empty := e.u.AddAlbum("Empty")
	empty.AddFile(enteapitest.FileSpec{Title: "e.jpg", Size: 10, Seed: 3, CreationTime: june})
	e.mustRun()
	e.same("A/x.jpg.xmp", named.Plaintext())
	require.True(t, e.sameInode("By date/2024/06/x.jpg.xmp", "A/x.jpg.xmp"))
	mine := map[string][]byte{
		"Gone/notes.txt":     []byte("mine"),
		"Gone/notes.txt.xmp": []byte("darktable's"),
		"Gone/0.jpg.txt":     []byte("mine too"),
	}
	for p, b := range mine {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, p), b, 0o644))
	}

	a.Remove(x)
	gone.Delete()
	empty.Delete()
	sum, err := e.prune(2)
	require.NoError(t, err)
	assert.Contains(t, sum.PruneRefused, "3 album entries", "sidecars are not counted")
	assert.True(t, e.exists("A/x.jpg.supplemental-metadata.json"), "a refused prune moves nothing")

	sum, err = e.prune(3)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Pruned)
	e.same("A/x.jpg.xmp", named.Plaintext())
	assert.False(t, e.exists(trashToday+"/A/x.jpg.xmp"), "a saved file with a sidecar's name moved with x.jpg")
	assert.True(t, e.sameInode("By date/2024/06/x.jpg.xmp", "A/x.jpg.xmp"), "a saved file left the date view with x.jpg")
	for _, p := range []string{"A/x.jpg", "A/x.jpg.supplemental-metadata.json",
		"Gone/0.jpg", "Gone/0.jpg.xmp", "Gone/0.jpg.supplemental-metadata.json", "Gone/" + sidecars.TakeoutAlbumFile,
		"Gone/.meta/album_meta.json", "Empty/e.jpg", "Empty/e.jpg.xmp", "Empty/" + sidecars.TakeoutAlbumFile} {
		assert.False(t, e.exists(p), "%s is still in place", p)
		assert.True(t, e.exists(trashToday+"/"+p), "%s is not in the trash", p)
	}
	for p, b := range mine {
		e.same(p, b)
	}
	assert.False(t, e.exists("Empty"), "an album folder with nothing of the user's goes")
	for _, p := range []string{"x.jpg", "x.jpg.supplemental-metadata.json", "0.jpg", "e.jpg", "e.jpg.xmp"} {
		assert.False(t, e.exists("By date/2024/06/"+p), "%s is still in the date view", p)
	}
	again, err := e.prune(100)
	require.NoError(t, err)
	assert.Zero(t, again.Pruned)
	e.same("A/x.jpg.xmp", named.Plaintext())
	for p, b := range mine {
		e.same(p, b)
	}
}

// A sidecar the folder's options do not keep is not quak's: an XMP file
// beside a pruned photo, without --xmp, is the user's (darktable writes
// that name) and stays.
func TestPruneLeavesSidecarsQuakDoesNotKeep(t *testing.T) {
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.Takeout, Zone: est}
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A", "x.jpg.xmp"), []byte("darktable's"), 0o644))
	x.Trash()
	sum, err := e.prune(100)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned)
	assert.True(t, e.exists(trashToday+"/A/x.jpg.supplemental-metadata.json"))
	e.same("A/x.jpg.xmp", []byte("darktable's"))
}

// linksIn lists the files under the date view that are rel (the same
// inode).
func (e *env) linksIn(rel string) []string {
	e.t.Helper()
	var out []string
	for _, p := range e.walk() {
		if strings.HasPrefix(p, DateViewDir+"/") && e.sameInode(p, rel) {
			out = append(out, p)
		}
	}
	return out
}

// A saved file named like another's sidecar keeps its place in the date
// view: no sidecar replaces it or is removed in its name, and a saved file
// is never linked into the date view as another file's sidecar.
func TestTheDateViewKeepsFilesNamedLikeSidecars(t *testing.T) {
	t.Run("album of the sidecar's file first", func(t *testing.T) { testFilesNamedLikeSidecars(t, false) })
	t.Run("album of the file with that name first", func(t *testing.T) { testFilesNamedLikeSidecars(t, true) })
}

func testFilesNamedLikeSidecars(t *testing.T, bFirst bool) {
	t.Helper()
	e := newEnv(t)
	e.views = allViews()
	may := time.Date(2024, 5, 15, 12, 0, 0, 0, time.UTC).UnixMicro()
	var a, b *enteapitest.Album
	if bFirst {
		b, a = e.u.AddAlbum("B"), e.u.AddAlbum("A")
	} else {
		a, b = e.u.AddAlbum("A"), e.u.AddAlbum("B")
	}
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1, CreationTime: june})
	b.AddFile(enteapitest.FileSpec{Title: "x.jpg.xmp", Data: []byte("B's file"), CreationTime: june})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2, CreationTime: june})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg.xmp", Data: []byte("A's file"), CreationTime: may})
	e.mustRun()
	var place string
	check := func(when string) {
		t.Helper()
		links := e.linksIn("B/x.jpg.xmp")
		if assert.Len(t, links, 1, "%s: B's file in the date view", when) {
			if place == "" {
				place = links[0]
			}
			assert.Equal(t, place, links[0], "%s: B's file moved in the date view", when)
		}
		assert.Equal(t, []string{"By date/2024/05/y.jpg.xmp"}, e.linksIn("A/y.jpg.xmp"), "%s: A's file linked as y.jpg's sidecar", when)
	}
	check("saved")
	if bFirst {
		assert.Equal(t, "By date/2024/06/x.jpg.xmp", place, "B's file, placed first, has its own name")
	}
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "<rdf:li>A</rdf:li>", "x.jpg keeps its own XMP in its album")

	e.views.XMP = false
	e.mustRun()
	check("XMP turned off")
	e.views.XMP = true
	e.mustRun()
	check("XMP turned on again")

	a.Remove(x)
	_, err := e.prune(100)
	require.NoError(t, err)
	check("x.jpg pruned")
	assert.False(t, e.exists("By date/2024/06/x.jpg"))
}

// A sidecar coming back from the trash never replaces a saved file that
// took its name while it was away: it is dropped, and the file it
// belonged to goes without, as any file whose sidecar name is taken.
func TestASidecarBackFromTheTrashNeverReplacesASavedFile(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1, CreationTime: june})
	e.mustRun()
	e.s.Advance(24 * time.Hour)
	a.Remove(x)
	_, err := e.prune(100)
	require.NoError(t, err)
	require.True(t, e.exists(trashToday+"/A/x.jpg.xmp"))
	named := a.AddFile(enteapitest.FileSpec{Title: "x.jpg.xmp", Data: []byte("a file, not x.jpg's sidecar"), CreationTime: june})
	e.mustRun()

	e.s.Advance(24 * time.Hour)
	a.Add(x)
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Restored)
	e.same("A/x.jpg", x.Plaintext())
	e.same("A/x.jpg.xmp", named.Plaintext())
	assert.True(t, e.exists("A/x.jpg.supplemental-metadata.json"), "the other sidecar came back")
	assert.False(t, e.exists(trashToday+"/A/x.jpg.xmp"), "the sidecar without a place lingers in the trash")
	assert.NotEmpty(t, e.kinds(FileWarning), "no warning that x.jpg has no XMP")
}
