package restore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/folder"
)

// Sidecars Ente's CLI wrote read as what they say (testdata/enteexport).
func TestExportSidecarsOfEntesCLIReadAsTheySay(t *testing.T) {
	var live, placed, video exportFile
	var album exportAlbum
	for name, v := range map[string]any{"live.json": &live, "placed.json": &placed, "video.json": &video, "album_meta.json": &album} {
		require.NoError(t, readJSONFile(filepath.Join("..", "testdata", "enteexport", name), v))
	}
	assert.Equal(t, exportAlbum{ID: 1580559962386438, AlbumName: "Edge cases"}, album)

	m, err := exportMeta(&live)
	require.NoError(t, err)
	assert.Equal(t, 2, m.FileType, "two parts: a live photo")
	assert.Equal(t, "IMG_0001.HEIC", m.Title)
	assert.Equal(t, int64(1674297000000000), m.CreationTime, "2023-01-21T10:30:00Z")
	assert.Equal(t, int64(1674300600000000), m.ModificationTime)
	assert.Len(t, live.Info.FileNames, 2)

	m, err = exportMeta(&placed)
	require.NoError(t, err)
	assert.Equal(t, 0, m.FileType)
	assert.Equal(t, "Tour Eiffel, caption in pubMagicMetadata", m.Caption)
	require.NotNil(t, m.Latitude)
	assert.InDelta(t, 48.85837, *m.Latitude, 1e-9)
	assert.InDelta(t, 2.294481, *m.Longitude, 1e-9)

	m, err = exportMeta(&video)
	require.NoError(t, err)
	assert.Equal(t, 1, m.FileType, ".mp4: a video")
	assert.Empty(t, m.Caption)
	assert.Nil(t, m.Latitude)
}

// exportSpec is a file of an Ente CLI export a test writes.
type exportSpec struct {
	id       int64
	title    string
	caption  string
	place    []float64
	created  string
	parts    map[string][]byte // name → bytes; two for a live photo, image first
	order    []string
	noHash   bool
	badBytes bool // the part on disk differs from the hash recorded
}

// writeExport writes an Ente CLI export: per album (name → id) a folder
// with .meta/album_meta.json, each file's sidecar and its parts.
func writeExport(t *testing.T, dir string, albums map[string]int64, files map[string][]exportSpec) {
	t.Helper()
	for name, id := range albums {
		folderPath := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Join(folderPath, exportMetaDir), 0o755))
		writeJSON(t, filepath.Join(folderPath, exportMetaDir, exportAlbumMeta),
			map[string]any{"id": id, "ownerID": 7, "albumName": name, "isDeleted": false, "accountOwnerIDs": []int64{7}})
		for _, f := range files[name] {
			var hashes []string
			for _, n := range f.order {
				h := keys.NewHash()
				h.Write(f.parts[n])
				hashes = append(hashes, keys.EncodeB64(h.Sum(nil)))
				b := f.parts[n]
				if f.badBytes {
					b = append([]byte{'!'}, b...)
				}
				require.NoError(t, os.WriteFile(filepath.Join(folderPath, n), b, 0o644))
			}
			info := map[string]any{"id": f.id, "ownerID": 7, "fileNames": f.order, "hash": nil}
			if !f.noHash {
				info["hash"] = joinHashes(hashes)
			}
			side := map[string]any{"title": f.title, "description": nil, "location": nil,
				"creationTime": f.created, "modificationTime": f.created, "info": info}
			if f.caption != "" {
				side["description"] = f.caption
			}
			if f.place != nil {
				side["location"] = map[string]float64{"latitude": f.place[0], "longitude": f.place[1]}
			}
			writeJSON(t, filepath.Join(folderPath, exportMetaDir, f.order[0]+".json"), side)
		}
	}
}

func joinHashes(hs []string) string {
	out := hs[0]
	for _, h := range hs[1:] {
		out += ":" + h
	}
	return out
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func one(name string, b []byte) (map[string][]byte, []string) {
	return map[string][]byte{name: b}, []string{name}
}

// exportLibrary is an export of a photo in two albums (two copies, one
// id), a captioned and placed photo, a live photo and a video.
func exportLibrary(t *testing.T, dir string) {
	t.Helper()
	both, bothOrder := one("both.jpg", enteapitest.FakeJPEG("both"))
	beach, beachOrder := one("beach.jpg", enteapitest.FakeJPEG("beach"))
	clip, clipOrder := one("clip.mp4", []byte("not really a video"))
	shared := exportSpec{id: 11, title: "both.jpg", created: "2020-09-13T12:26:40Z", parts: both, order: bothOrder}
	writeExport(t, dir, map[string]int64{"Trip": 1, "Family": 2}, map[string][]exportSpec{
		"Trip": {shared,
			{id: 12, title: "beach.jpg", caption: "the sea", place: []float64{43.5, 7.25}, created: "2017-07-14T02:40:00Z", parts: beach, order: beachOrder},
			{id: 13, title: "IMG_1.HEIC", created: "2021-01-01T00:00:00Z",
				parts: map[string][]byte{"IMG_1.HEIC": []byte("heic bytes"), "IMG_1.MOV": []byte("mov bytes")}, order: []string{"IMG_1.HEIC", "IMG_1.MOV"}},
			{id: 14, title: "clip.mp4", created: "2022-02-02T02:02:02+02:00", parts: clip, order: clipOrder}},
		"Family": {shared},
	})
}

// An Ente CLI export restored: one file per id (a copy in two albums
// uploaded once, added to the other), live photos as live photos, and
// the titles, times, places and captions the sidecars give.
func TestRestoreFromAnEnteExportGivesTheLibraryBack(t *testing.T) {
	e := newEnv(t)
	exportLibrary(t, e.dir)
	sum := e.mustRestore()
	assert.Equal(t, 4, sum.Files)
	assert.Equal(t, 4, sum.Uploaded)
	assert.Equal(t, 1, sum.Added, "the second copy is an addition, not an upload")
	assert.Equal(t, 2, sum.AlbumsCreated)

	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	got := e.backedUp(again)
	require.Len(t, got, 4)
	byTitle := map[string]copyOf{}
	for _, c := range got {
		byTitle[c.Meta.Title] = c
	}
	assert.Equal(t, "Family/album/0,Trip/album/0", byTitle["both.jpg"].Albums)
	beach := byTitle["beach.jpg"].Meta
	assert.Equal(t, "the sea", beach.Caption)
	require.NotNil(t, beach.Latitude)
	assert.Equal(t, 43.5, *beach.Latitude)
	assert.Equal(t, 7.25, *beach.Longitude)
	assert.Equal(t, int64(1500000000000000), beach.CreationTime)
	assert.Equal(t, 2, byTitle["IMG_1.HEIC"].Meta.FileType, "a live photo again")
	assert.Equal(t, 1, byTitle["clip.mp4"].Meta.FileType)
	assert.Equal(t, int64(1643760122000000), byTitle["clip.mp4"].Meta.CreationTime, "its offset applied")
	bytesBack := fileBytes(t, again)
	sameBytes(t, []byte("heic bytes"), bytesBack["IMG_1.HEIC"], "the live photo's image")
	sameBytes(t, []byte("mov bytes"), bytesBack["IMG_1.MOV"], "the live photo's video")
	sameBytes(t, enteapitest.FakeJPEG("beach"), bytesBack["beach.jpg"], "beach.jpg")

	sum = e.mustRestore()
	assert.Zero(t, sum.Uploaded, "a second restore uploads nothing")
	assert.Equal(t, 4, sum.Present)
	assert.Zero(t, sum.Bytes)
}

// An export file whose bytes are not those its sidecar's hash names is
// never sent: the others are restored and it fails by name.
func TestRestoreFromAnExportRefusesAFileItsHashDoesNotVouchFor(t *testing.T) {
	e := newEnv(t)
	good, goodOrder := one("good.jpg", enteapitest.FakeJPEG("good"))
	bad, badOrder := one("bad.jpg", enteapitest.FakeJPEG("bad"))
	writeExport(t, e.dir, map[string]int64{"Trip": 1}, map[string][]exportSpec{"Trip": {
		{id: 1, title: "good.jpg", parts: good, order: goodOrder},
		{id: 2, title: "bad.jpg", parts: bad, order: badOrder, badBytes: true},
	}})
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Uploaded)
	require.Len(t, sum.Failures, 1)
	assert.Equal(t, "bad.jpg", sum.Failures[0].Title)
	assert.Contains(t, sum.Failures[0].Error, ErrChanged.Error())
	assert.Equal(t, 1, e.s.Requests("POST /files"))
}

// A file Ente recorded without a hash is restored as the export holds it.
func TestRestoreFromAnExportTakesAFileWithoutAHashAsItIs(t *testing.T) {
	e := newEnv(t)
	old, order := one("old.jpg", enteapitest.FakeJPEG("old"))
	writeExport(t, e.dir, map[string]int64{"Trip": 1}, map[string][]exportSpec{"Trip": {
		{id: 1, title: "old.jpg", parts: old, order: order, noHash: true}}})
	sum := e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded)
	sum = e.mustRestore()
	assert.Equal(t, 1, sum.Present, "its hash, made from the bytes, finds it the second time")
}

// A sidecar naming a part outside its album folder fails that file by
// name, and nothing is sent; a part that is a symbolic link is never read.
func TestRestoreFromAnExportReadsOnlyFilesOfTheAlbumFolder(t *testing.T) {
	e := newEnv(t)
	p, order := one("x.jpg", enteapitest.FakeJPEG("x"))
	writeExport(t, e.dir, map[string]int64{"Trip": 1}, map[string][]exportSpec{"Trip": {{id: 1, title: "x.jpg", parts: p, order: order}}})
	side := filepath.Join(e.dir, "Trip", exportMetaDir, "x.jpg.json")
	b, err := os.ReadFile(side)
	require.NoError(t, err)

	outside := filepath.Join(t.TempDir(), "secret.jpg")
	require.NoError(t, os.WriteFile(outside, enteapitest.FakeJPEG("secret"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Trip", "x.jpg")))
	require.NoError(t, os.Symlink(outside, filepath.Join(e.dir, "Trip", "x.jpg")))
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	assert.Zero(t, sum.Uploaded, "a link is not a file of the export")
	require.Len(t, sum.Failures, 1)
	assert.Equal(t, Failure{Source: 1, Title: "x.jpg", Error: "no album folder holds it as a plain file"}, sum.Failures[0])

	var side2 map[string]any
	require.NoError(t, json.Unmarshal(b, &side2))
	side2["info"].(map[string]any)["fileNames"] = []string{"../../secret.jpg"}
	writeJSON(t, side, side2)
	sum, err = e.restoreWith(e.options())
	require.NoError(t, err)
	require.Len(t, sum.Failures, 1)
	assert.Equal(t, filepath.Join("Trip", exportMetaDir, "x.jpg.json"), sum.Failures[0].Title)
	assert.Contains(t, sum.Failures[0].Error, `part name "../../secret.jpg" is not a name in its album folder`)
	assert.Zero(t, e.s.Requests("POST /files"))
}

// An export's Favorites, Uncategorized and .hidden folders become the
// target's favourites, uncategorized and hidden albums.
func TestRestoreFromAnExportKnowsEntesSpecialAlbumsByName(t *testing.T) {
	e := newEnv(t)
	a, ao := one("a.jpg", enteapitest.FakeJPEG("a"))
	b, bo := one("b.jpg", enteapitest.FakeJPEG("b"))
	c, co := one("c.jpg", enteapitest.FakeJPEG("c"))
	writeExport(t, e.dir, map[string]int64{"Favorites": 1, "Uncategorized": 2, ".hidden": 3}, map[string][]exportSpec{
		"Favorites": {{id: 1, title: "a.jpg", parts: a, order: ao}}, "Uncategorized": {{id: 2, title: "b.jpg", parts: b, order: bo}},
		".hidden": {{id: 3, title: "c.jpg", parts: c, order: co}}})
	e.mustRestore()
	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	albums := map[string]string{}
	for _, c := range e.backedUp(again) {
		albums[c.Meta.Title] = c.Albums
	}
	assert.Equal(t, map[string]string{"a.jpg": "Favorites/favorites/0", "b.jpg": "Uncategorized/uncategorized/0", "c.jpg": ".hidden/album/2"}, albums)
}

// A dry run of an export writes nothing in it; a folder that is neither a
// backup nor an export is refused.
func TestRestoreDryRunOfAnExportWritesNothingThere(t *testing.T) {
	e := newEnv(t)
	exportLibrary(t, e.dir)
	o := e.options()
	o.DryRun = true
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 4, sum.Uploaded)
	_, err = os.Stat(filepath.Join(e.dir, folder.StateDir))
	assert.True(t, errors.Is(err, os.ErrNotExist), "no .quak in a dry run's export")
	assert.Zero(t, e.s.Requests("POST /files/upload-url"))

	o.Dir = t.TempDir()
	_, err = e.restoreWith(o)
	var de *folder.DirError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, "holds no quak backup and no export of Ente's CLI or desktop app", de.Reason)
}

// A quak backup whose .quak was lost is an export with quak's additions
// to the JSON: its albums come back archived or hidden as they were, and
// its files with the type quak recorded.
func TestRestoreFromAQuakBackupWithoutItsStateKeepsVisibilityAndType(t *testing.T) {
	e := newEnv(t)
	e.library()
	old := e.src.AddAlbum("Old days")
	old.SetVisibility(1)
	old.AddFile(enteapitest.FileSpec{Title: "clip.bin", FileType: 1, Data: []byte("a video by its record, not its name")})
	e.backup(e.src, e.dir)
	lost := filepath.Join(t.TempDir(), "lost")
	e.backup(e.src, lost)
	require.NoError(t, os.RemoveAll(filepath.Join(lost, folder.StateDir)))
	o := e.options()
	o.Dir = lost
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.Equal(t, 7, sum.Uploaded)
	// As sameAsSource, but for what the JSON does not hold: times below
	// the second, and the time zone's offset.
	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	want, got := e.backedUp(e.dir), e.backedUp(again)
	require.Len(t, got, len(want))
	seconds := func(c copyOf) copyOf {
		c.Meta.CreationTime -= c.Meta.CreationTime % 1_000_000
		c.Meta.ModificationTime -= c.Meta.ModificationTime % 1_000_000
		c.Meta.Offset = ""
		return c
	}
	for h, w := range want {
		assert.Equal(t, seconds(w), got[h], w.Meta.Title)
	}
}
