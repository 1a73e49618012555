package backup

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/sidecars/sidecarstest"
)

// est is the local zone of these tests: five hours behind UTC, so a photo
// taken late in a UTC day belongs to the day before in the date view.
var est = time.FixedZone("EST", -5*3600)

func allViews() Views {
	return Views{Sidecars: sidecars.Takeout, XMP: true, DateView: "YYYY/MM", Zone: est, ZoneName: "EST"}
}

func (e *env) xmps(rels ...string) map[string]sidecarstest.XMP {
	e.t.Helper()
	paths := make([]string, len(rels))
	for i, r := range rels {
		paths[i] = filepath.Join(e.dir, r)
		require.FileExists(e.t, paths[i])
	}
	got := sidecarstest.ReadXMP(e.t, paths...)
	out := map[string]sidecarstest.XMP{}
	for i, r := range rels {
		out[r] = got[i]
	}
	return out
}

func (e *env) takeout(rel string) *sidecarstest.Takeout {
	e.t.Helper()
	tk, err := sidecarstest.DecodeTakeout(e.read(rel))
	require.NoError(e.t, err, rel)
	return tk
}

func (e *env) sameInode(a, b string) bool {
	e.t.Helper()
	return sameFile(filepath.Join(e.dir, a), filepath.Join(e.dir, b))
}

func (e *env) inode(rel string) uint64 {
	e.t.Helper()
	fi, err := os.Stat(filepath.Join(e.dir, rel))
	require.NoError(e.t, err, rel)
	return inodeOf(fi)
}

type viewLibrary struct {
	eiffel, nyc, old, zero, live, clip *enteapitest.File
	trips, family, favs                *enteapitest.Album
}

func viewsLibrary(e *env) viewLibrary {
	var l viewLibrary
	l.trips, l.family = e.u.AddAlbum("Trips"), e.u.AddAlbum("Family & <Friends>")
	l.favs = e.u.AddCollection("Favorites", "favorites")
	// Taken at 00:30 in Paris on 1 June: 22:30 UTC, 17:30 in the test's zone on 31 May.
	l.eiffel = l.trips.AddFile(enteapitest.FileSpec{Title: "eiffel.jpg", Size: 3000, Seed: 1,
		CreationTime: time.Date(2024, 5, 31, 22, 30, 0, 0, time.UTC).UnixMicro(), OffsetTime: "+02:00",
		Latitude: 48.858370, Longitude: 2.294481, Caption: "Tour Eiffel\n<b>by \"night\"</b> & more"})
	l.nyc = l.trips.AddFile(enteapitest.FileSpec{Title: "nyc.jpg", Size: 2000, Seed: 2,
		CreationTime: time.Date(2023, 1, 15, 10, 30, 0, 0, time.UTC).UnixMicro(), Latitude: 40.689247, Longitude: -74.044502})
	l.family.Add(l.nyc)
	l.favs.Add(l.nyc)
	l.old = l.family.AddFile(enteapitest.FileSpec{Title: "grandpa.jpg", Size: 100, Seed: 3,
		CreationTime: time.Date(1931, 7, 14, 8, 0, 0, 0, time.UTC).UnixMicro()})
	l.zero = l.family.AddFile(enteapitest.FileSpec{Title: "null-island.jpg", Size: 100, Seed: 4, ZeroLocation: true,
		CreationTime: time.Date(2020, 2, 2, 12, 0, 0, 0, time.UTC).UnixMicro()})
	l.live = l.trips.AddFile(enteapitest.FileSpec{Title: "IMG_0100.HEIC", FileType: 2, Caption: "live",
		CreationTime: time.Date(2022, 8, 1, 12, 0, 0, 0, time.UTC).UnixMicro(),
		Data:         enteapitest.LivePhoto("heic", []byte("the still"), "mov", []byte("the motion"))})
	l.clip = l.trips.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 5000, Seed: 5,
		CreationTime: time.Date(2021, 3, 3, 3, 3, 3, 0, time.UTC).UnixMicro(),
		Latitude:     1, Longitude: 1, EditedLatitude: -33.856784, EditedLongitude: 151.215297})
	return l
}

func TestXMPTakeoutAndDateViewBesideEveryFile(t *testing.T) {
	sidecarstest.RequireExiftool(t)
	e := newEnv(t)
	e.views = allViews()
	l := viewsLibrary(e)
	sum := e.mustRun()
	require.Zero(t, sum.Failed)

	// The originals are untouched: byte for byte what Ente holds.
	e.same("Trips/eiffel.jpg", l.eiffel.Plaintext())
	e.same("Trips/nyc.jpg", l.nyc.Plaintext())
	e.same("Family & _Friends_/grandpa.jpg", l.old.Plaintext())
	e.same("Trips/IMG_0100.heic", []byte("the still"))
	e.same("Trips/IMG_0100.mov", []byte("the motion"))

	x := e.xmps("Trips/eiffel.jpg.xmp", "Trips/nyc.jpg.xmp", "Family & _Friends_/nyc.jpg.xmp", "Favorites/nyc.jpg.xmp",
		"Family & _Friends_/grandpa.jpg.xmp", "Family & _Friends_/null-island.jpg.xmp", "Trips/IMG_0100.heic.xmp",
		"Trips/IMG_0100.mov.xmp", "Trips/clip.mp4.xmp", "By date/2024/05/eiffel.jpg.xmp")
	eiffel := x["Trips/eiffel.jpg.xmp"]
	assert.Equal(t, "2024-06-01T00:30:00+02:00", eiffel.DateTimeOriginal.Format(time.RFC3339), "the offset Ente recorded for the place")
	assert.True(t, eiffel.CreateDate.Equal(eiffel.DateTimeOriginal) && eiffel.DateCreated.Equal(eiffel.DateTimeOriginal))
	assert.InDelta(t, 48.858370, eiffel.Lat, 1e-6)
	assert.InDelta(t, 2.294481, eiffel.Lon, 1e-6)
	assert.Equal(t, "Tour Eiffel\n<b>by \"night\"</b> & more", eiffel.Description)
	assert.Equal(t, "eiffel.jpg", eiffel.Title)
	assert.Empty(t, eiffel.Rating)
	assert.Equal(t, []string{"Trips"}, eiffel.Subject)
	assert.Equal(t, eiffel, withFile(x["By date/2024/05/eiffel.jpg.xmp"], eiffel.File), "the date view's sidecar is the album's")

	for _, p := range []string{"Trips/nyc.jpg.xmp", "Family & _Friends_/nyc.jpg.xmp", "Favorites/nyc.jpg.xmp"} {
		nyc := x[p]
		assert.Equal(t, "2023-01-15T05:30:00-05:00", nyc.DateTimeOriginal.Format(time.RFC3339), "no offset recorded: the local zone")
		assert.InDelta(t, -74.044502, nyc.Lon, 1e-6, "west is negative")
		assert.Equal(t, "5", nyc.Rating, "a favourite")
		assert.Equal(t, []string{"Family & <Friends>", "Trips"}, nyc.Subject, "every album, by its real name; not Favorites")
		assert.Equal(t, nyc.Subject, nyc.TagsList, "the same as digiKam tags, which Immich reads")
	}
	assert.Equal(t, "1931-07-14T03:00:00-05:00", x["Family & _Friends_/grandpa.jpg.xmp"].DateTimeOriginal.Format(time.RFC3339))
	assert.False(t, x["Family & _Friends_/grandpa.jpg.xmp"].HasGPS)
	assert.False(t, x["Family & _Friends_/null-island.jpg.xmp"].HasGPS, "(0, 0) is Ente's no location")
	for _, p := range []string{"Trips/IMG_0100.heic.xmp", "Trips/IMG_0100.mov.xmp"} {
		assert.Equal(t, "live", x[p].Description, "one sidecar per live photo part")
	}
	assert.Equal(t, "IMG_0100.heic", x["Trips/IMG_0100.heic.xmp"].Title)
	assert.Equal(t, "IMG_0100.mov", x["Trips/IMG_0100.mov.xmp"].Title)
	assert.InDelta(t, -33.856784, x["Trips/clip.mp4.xmp"].Lat, 1e-6, "an edited location wins")

	// Takeout JSON beside every file, every field an importer reads.
	tk := e.takeout("Trips/eiffel.jpg.supplemental-metadata.json")
	assert.Equal(t, "eiffel.jpg", tk.Title)
	assert.Equal(t, "Tour Eiffel\n<b>by \"night\"</b> & more", tk.Description)
	assert.Equal(t, time.Date(2024, 5, 31, 22, 30, 0, 0, time.UTC), tk.Taken)
	assert.InDelta(t, 48.858370, tk.Lat, 1e-9)
	tk = e.takeout("Favorites/nyc.jpg.supplemental-metadata.json")
	assert.True(t, tk.Favorited)
	assert.InDelta(t, -74.044502, tk.Lon, 1e-9)
	tk = e.takeout("Family & _Friends_/grandpa.jpg.supplemental-metadata.json")
	assert.Equal(t, time.Date(1931, 7, 14, 8, 0, 0, 0, time.UTC), tk.Taken, "before 1970: negative seconds")
	assert.Zero(t, tk.Lat)
	e.takeout("Trips/IMG_0100.heic.supplemental-metadata.json")
	e.takeout("Trips/IMG_0100.mov.supplemental-metadata.json")
	var album sidecars.TakeoutAlbum
	require.NoError(t, json.Unmarshal(e.read("Family & _Friends_/metadata.json"), &album))
	assert.Equal(t, "Family & <Friends>", album.Title, "immich-go names the album from it")
	assert.False(t, e.exists("Trips/.meta/eiffel.jpg.json"), "takeout style: no ente sidecars")
	assert.True(t, e.exists("Trips/.meta/album_meta.json"), "the album file that recognises the folder stays")

	// The date view: the same inodes, in the local zone's folders.
	for view, album := range map[string]string{
		"By date/2024/05/eiffel.jpg":                         "Trips/eiffel.jpg",
		"By date/2023/01/nyc.jpg":                            "Trips/nyc.jpg",
		"By date/1931/07/grandpa.jpg":                        "Family & _Friends_/grandpa.jpg",
		"By date/2022/08/IMG_0100.heic":                      "Trips/IMG_0100.heic",
		"By date/2022/08/IMG_0100.mov":                       "Trips/IMG_0100.mov",
		"By date/2021/03/clip.mp4":                           "Trips/clip.mp4",
		"By date/2021/03/clip.mp4.xmp":                       "Trips/clip.mp4.xmp",
		"By date/2020/02/null-island.jpg":                    "Family & _Friends_/null-island.jpg",
		"By date/2023/01/nyc.jpg.xmp":                        "Trips/nyc.jpg.xmp",
		"By date/2024/05/eiffel.jpg.xmp":                     "Trips/eiffel.jpg.xmp",
		"By date/2022/08/IMG_0100.mov.xmp":                   "Trips/IMG_0100.mov.xmp",
		"By date/2023/01/nyc.jpg.supplemental-metadata.json": "Trips/nyc.jpg.supplemental-metadata.json",
	} {
		assert.True(t, e.sameInode(view, album), "%s is not a link to %s", view, album)
	}
	assert.Len(t, viewFiles(e), 6*3+3, "one entry per file (not per album), each part with its two sidecars")

	// A second run changes nothing: no file is rewritten.
	before := map[string]uint64{}
	for _, p := range e.walk() {
		before[p] = e.inode(p)
	}
	sum = e.mustRun()
	assert.Zero(t, sum.New+sum.Updated+sum.Linked)
	assert.Empty(t, e.kinds(ViewsChanged))
	for p, ino := range before {
		assert.Equal(t, ino, e.inode(p), "%s was rewritten", p)
	}
	e.noTemps()
}

func withFile(x sidecarstest.XMP, file string) sidecarstest.XMP {
	x.File = file
	return x
}

// viewFiles lists the files of the date view.
func viewFiles(e *env) []string {
	var out []string
	for _, p := range e.walk() {
		if strings.HasPrefix(p, DateViewDir+string(filepath.Separator)) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func TestEditsOnTheServerRewriteSidecarsAndMoveTheDateView(t *testing.T) {
	sidecarstest.RequireExiftool(t)
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1,
		CreationTime: time.Date(2020, 1, 10, 12, 0, 0, 0, time.UTC).UnixMicro()})
	e.mustRun()
	downloads := e.downloads()
	ino := e.inode("A/x.jpg")

	f.Edit(func(s *enteapitest.FileSpec) {
		s.Caption = "edited & <new>"
		s.EditedTime = time.Date(1969, 12, 31, 23, 59, 59, 500000000, time.UTC).UnixMicro()
		s.EditedLatitude, s.EditedLongitude = -12.5, -77.25
		s.EditedName = "renamed.jpg"
	})
	sum := e.mustRun()
	assert.Equal(t, downloads, e.downloads(), "edits download nothing")
	assert.Equal(t, 1, sum.Updated)
	assert.Equal(t, ino, e.inode("A/renamed.jpg"), "the original was renamed, not rewritten")
	for _, gone := range []string{"A/x.jpg", "A/x.jpg.xmp", "A/x.jpg.supplemental-metadata.json", "By date/2020"} {
		assert.False(t, e.exists(gone), "%s is left behind", gone)
	}
	x := e.xmps("A/renamed.jpg.xmp")["A/renamed.jpg.xmp"]
	assert.Equal(t, "edited & <new>", x.Description)
	assert.Equal(t, "renamed.jpg", x.Title)
	assert.Equal(t, "1969-12-31T18:59:59.5-05:00", x.DateTimeOriginal.Format(time.RFC3339Nano))
	assert.InDelta(t, -77.25, x.Lon, 1e-6)
	tk := e.takeout("A/renamed.jpg.supplemental-metadata.json")
	assert.Equal(t, int64(-1), tk.Taken.Unix(), "half a second before 1970 is second -1")
	assert.True(t, e.sameInode("By date/1969/12/renamed.jpg", "A/renamed.jpg"), "moved to the edited date, under the new name")
	assert.True(t, e.sameInode("By date/1969/12/renamed.jpg.xmp", "A/renamed.jpg.xmp"))
	e.same("A/renamed.jpg", f.Plaintext())

	// New content: the date view links to the new bytes.
	f.Reupload([]byte("version two"))
	e.mustRun()
	e.same("By date/1969/12/renamed.jpg", []byte("version two"))
	assert.True(t, e.sameInode("By date/1969/12/renamed.jpg", "A/renamed.jpg"))
}

func TestAlbumRenamesRewriteKeywords(t *testing.T) {
	sidecarstest.RequireExiftool(t)
	e := newEnv(t)
	e.views = Views{XMP: true, Zone: est}
	a, b := e.u.AddAlbum("Old name"), e.u.AddAlbum("Other")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	b.Add(f)
	e.mustRun()
	a.Rename("New name")
	e.mustRun()
	x := e.xmps("New name/x.jpg.xmp", "Other/x.jpg.xmp")
	assert.Equal(t, []string{"New name", "Other"}, x["Other/x.jpg.xmp"].Subject)
	assert.Equal(t, []string{"New name", "Other"}, x["New name/x.jpg.xmp"].Subject)
	b.Delete()
	e.mustRun()
	assert.Equal(t, []string{"New name"}, e.xmps("New name/x.jpg.xmp")["New name/x.jpg.xmp"].Subject, "a deleted album is no keyword")
}

// The sidecars and the date view of a backup can be switched on, off and
// between styles with nothing downloaded, and back to exactly what was.
func TestSwitchingViewsConvertsInPlace(t *testing.T) {
	e := newEnv(t)
	l := viewsLibrary(e)
	e.mustRun()
	original := snapshot(t, e.dir)
	downloads := e.downloads()

	e.views = allViews()
	sum := e.mustRun()
	assert.Equal(t, downloads, e.downloads(), "nothing downloaded")
	assert.Zero(t, sum.New+sum.Updated)
	changed := e.kinds(ViewsChanged)
	require.Len(t, changed, 1)
	assert.Equal(t, 6, changed[0].Files, "every file")
	for _, p := range []string{"Trips/eiffel.jpg.xmp", "Trips/eiffel.jpg.supplemental-metadata.json", "By date/2024/05/eiffel.jpg",
		"Trips/metadata.json", "Trips/IMG_0100.mov.xmp"} {
		assert.True(t, e.exists(p), "%s missing", p)
	}
	for _, p := range e.walk() {
		if strings.Contains(p, ".meta") {
			assert.Equal(t, "album_meta.json", filepath.Base(p), "a file sidecar is left in .meta: %s", p)
		}
	}
	e.same("Trips/eiffel.jpg", l.eiffel.Plaintext())
	m, err := folder.At(e.dir).ReadViewOptions()
	require.NoError(t, err)
	assert.Len(t, m.ZoneRules, 16, "the zone's rules are remembered")
	m.ZoneRules = ""
	assert.Equal(t, folder.ViewOptions{Sidecars: sidecars.Takeout, XMP: true, DateView: "YYYY/MM", Zone: "EST", Applied: true}, *m)

	// A run with the same options converts nothing.
	e.mustRun()
	assert.Empty(t, e.kinds(ViewsChanged))

	// Back to the defaults: the folder is what it was, byte for byte.
	e.views = Views{}
	e.mustRun()
	assert.Equal(t, downloads, e.downloads())
	now := snapshot(t, e.dir)
	for p := range now {
		if strings.HasPrefix(p, folder.StateDir) {
			delete(now, p)
		}
	}
	for p := range original {
		if strings.HasPrefix(p, folder.StateDir) {
			delete(original, p)
		}
	}
	assert.Equal(t, keysOf(original), keysOf(now), "the same files")
	for p, v := range original {
		if !strings.HasSuffix(p, ".json") || strings.HasSuffix(p, "album_meta.json") {
			continue
		}
		assert.Equal(t, strings.Fields(v)[2], strings.Fields(now[p])[2], "%s has other content", p)
	}
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasSuffix(k, ".") { // the root itself
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func TestNoSidecarsAtAll(t *testing.T) {
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.None}
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	assert.ElementsMatch(t, []string{"A/x.jpg", "A/.meta/album_meta.json"}, e.walk())
}

// A run killed between a file's rename and its page's commit leaves the
// file at its final name, unrecorded. With no `ente export` sidecar to
// name it, its bytes do: the next run takes it where it is, downloading
// nothing, instead of saving a second copy as x_1.jpg.
func TestAnUnrecordedSaveIsRecognisedWithoutEnteSidecars(t *testing.T) {
	for _, style := range []sidecars.Style{sidecars.None, sidecars.Takeout} {
		t.Run(string(style), func(t *testing.T) {
			e := newEnv(t)
			e.views = Views{Sidecars: style}
			a := e.u.AddAlbum("A")
			a.AddFile(enteapitest.FileSpec{Title: "first.jpg", Size: 10, Seed: 1})
			e.mustRun()
			db := folder.At(e.dir).StateFile()
			before, err := os.ReadFile(db)
			require.NoError(t, err)
			x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 2})
			live := a.AddFile(enteapitest.FileSpec{Title: "L.HEIC", FileType: 2,
				Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("motion"))})
			e.mustRun()
			require.NoError(t, os.WriteFile(db, before, 0o600)) // as if the commit never happened

			downloads := e.downloads()
			sum := e.mustRun()
			assert.Equal(t, 2, sum.Adopted)
			assert.Zero(t, sum.New)
			assert.Equal(t, downloads, e.downloads())
			for _, p := range e.walk() {
				assert.NotContains(t, p, "_1", "saved a second time: %s", p)
			}
			e.same("A/x.jpg", x.Plaintext())
			e.same("A/L.heic", []byte("still"))
			e.same("A/L.mov", []byte("motion"))
			_ = live
		})
	}
}

// A file that is not the one being saved keeps its name, and the download
// gets another.
func TestAStrangersFileIsNotTakenForALeftover(t *testing.T) {
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.None}
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "first.jpg", Size: 10, Seed: 1})
	e.mustRun()
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A", "x.jpg"), []byte("mine"), 0o644))
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 2})
	e.mustRun()
	e.same("A/x.jpg", []byte("mine"))
	e.same("A/x_1.jpg", x.Plaintext())
}

func TestADryRunOfNewViewsWritesNothing(t *testing.T) {
	e := newEnv(t)
	viewsLibrary(e)
	e.mustRun()
	before := snapshot(t, e.dir)
	e.views = allViews()
	o := e.options()
	o.DryRun = true
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, before, snapshot(t, e.dir))
	changed := e.kinds(ViewsChanged)
	require.Len(t, changed, 1)
	assert.Equal(t, 6, changed[0].Files)
	m, err := folder.At(e.dir).ReadViewOptions()
	require.NoError(t, err)
	assert.Nil(t, m, "a dry run remembers nothing")
}

// A file kept although its bytes are not what its metadata's hash says
// is a saved file like any other: it gets its sidecars.
func TestAMismatchedFileGetsItsSidecars(t *testing.T) {
	e := newEnv(t)
	e.views = Views{XMP: true, Sidecars: sidecars.Takeout, Zone: est}
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1, Hash: "bm90IGl0cyBoYXNo"})
	sum := e.mustRun()
	require.Equal(t, 1, sum.HashMismatches)
	assert.True(t, e.exists("A/x.jpg.xmp"))
	assert.True(t, e.exists("A/x.jpg.supplemental-metadata.json"))
}

// Takeout JSON alone (no XMP) is written for new files and kept in step
// with edits, run by run.
func TestTakeoutAloneIsKeptInStep(t *testing.T) {
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.Takeout}
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "first.jpg", Size: 10, Seed: 1})
	e.mustRun()
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 2})
	e.mustRun()
	assert.Empty(t, e.takeout("A/x.jpg.supplemental-metadata.json").Description)
	f.Edit(func(s *enteapitest.FileSpec) { s.Caption = "later" })
	e.mustRun()
	assert.Equal(t, "later", e.takeout("A/x.jpg.supplemental-metadata.json").Description)
	assert.False(t, e.exists("A/x.jpg.xmp"))
}

// An album's Takeout metadata.json keeps the date it was first written
// with: it is not rewritten run after run.
func TestAnAlbumsTakeoutFileKeepsItsDate(t *testing.T) {
	e := newEnv(t)
	e.views = Views{Sidecars: sidecars.Takeout}
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	first := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	o := e.options()
	o.Now = func() time.Time { return first }
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	before := e.read("A/metadata.json")
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2}) // a page of A is committed again
	a.Rename("B")
	o.Now = func() time.Time { return first.AddDate(1, 0, 0) }
	_, err = Run(context.Background(), o)
	require.NoError(t, err)
	var album sidecars.TakeoutAlbum
	require.NoError(t, json.Unmarshal(e.read("B/metadata.json"), &album))
	assert.Equal(t, "B", album.Title)
	assert.Equal(t, fmt.Sprint(first.Unix()), album.Date.Timestamp, "the first date is kept")
	assert.Contains(t, string(before), fmt.Sprint(first.Unix()))
}
