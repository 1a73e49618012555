package restore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// desktopCopy is one copy of a file in an export of Ente's desktop app.
type desktopCopy struct {
	id, album int64
	name      string            // the exported name; a live photo's is JSON
	parts     map[string][]byte // part name → bytes
	meta      map[string]any    // the sidecar of the (first) part; nil: none
}

// writeDesktopExport writes an export as Ente's desktop app does
// (web/packages/new/photos/services/export.ts): export_status.json at the
// top, album folders, and a metadata folder of Takeout-like sidecars.
func writeDesktopExport(t *testing.T, dir string, albums map[int64]string, copies []desktopCopy) {
	t.Helper()
	rec := map[string]any{"version": 5, "stage": 5, "lastAttemptTimestamp": 1700000000000,
		"collectionExportNames": map[string]string{}, "fileExportNames": map[string]string{}}
	for id, name := range albums {
		rec["collectionExportNames"].(map[string]string)[strconv.FormatInt(id, 10)] = name
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name, desktopMetaDir), 0o755))
	}
	for _, c := range copies {
		folder := filepath.Join(dir, albums[c.album])
		uid := strconv.FormatInt(c.id, 10) + "_" + strconv.FormatInt(c.album, 10) + "_1700000000000000"
		rec["fileExportNames"].(map[string]string)[uid] = c.name
		for n, b := range c.parts {
			require.NoError(t, os.WriteFile(filepath.Join(folder, n), b, 0o644))
			if c.meta != nil {
				writeJSON(t, filepath.Join(folder, desktopMetaDir, n+".json"), c.meta)
			}
		}
	}
	writeJSON(t, filepath.Join(dir, desktopRecordName), rec)
}

func takeout(title string, seconds int64) map[string]any {
	ts := map[string]string{"timestamp": strconv.FormatInt(seconds, 10), "formatted": "whenever"}
	return map[string]any{"title": title, "photoTakenTime": ts, "creationTime": ts, "modificationTime": ts}
}

func desktopLibrary(t *testing.T, dir string) {
	t.Helper()
	beach := takeout("beach.jpg", 1_500_000_000)
	beach["caption"] = "the sea"
	beach["geoData"] = map[string]float64{"latitude": 43.5, "longitude": 7.25}
	live, err := json.Marshal(map[string]string{"image": "IMG_1.HEIC", "video": "IMG_1.MOV"})
	require.NoError(t, err)
	both := map[string][]byte{"both.jpg": enteapitest.FakeJPEG("both")}
	writeDesktopExport(t, dir, map[int64]string{1: "Trip", 2: "Family"}, []desktopCopy{
		{id: 11, album: 1, name: "both.jpg", parts: both, meta: takeout("both.jpg", 1_600_000_000)},
		{id: 11, album: 2, name: "both.jpg", parts: both, meta: takeout("both.jpg", 1_600_000_000)},
		{id: 12, album: 1, name: "beach.jpg", parts: map[string][]byte{"beach.jpg": enteapitest.FakeJPEG("beach")}, meta: beach},
		{id: 13, album: 1, name: string(live), parts: map[string][]byte{"IMG_1.HEIC": []byte("heic bytes"), "IMG_1.MOV": []byte("mov bytes")},
			meta: takeout("IMG_1.HEIC", 1_609_459_200)},
		{id: 14, album: 2, name: "clip.mp4", parts: map[string][]byte{"clip.mp4": []byte("not really a video")}, meta: takeout("clip.mp4", 1)},
	})
}

// An export of Ente's desktop app restored: one file per id, the live
// photo as a live photo, its caption (which Ente's own import drops),
// place and times.
func TestRestoreFromADesktopExportGivesTheLibraryBack(t *testing.T) {
	e := newEnv(t)
	desktopLibrary(t, e.dir)
	sum := e.mustRestore()
	assert.Equal(t, 4, sum.Uploaded)
	assert.Equal(t, 1, sum.Added)

	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	byTitle := map[string]copyOf{}
	for _, c := range e.backedUp(again) {
		byTitle[c.Meta.Title] = c
	}
	require.Len(t, byTitle, 4)
	assert.Equal(t, "Family/album/0,Trip/album/0", byTitle["both.jpg"].Albums)
	beach := byTitle["beach.jpg"].Meta
	assert.Equal(t, "the sea", beach.Caption)
	require.NotNil(t, beach.Latitude)
	assert.Equal(t, 43.5, *beach.Latitude)
	assert.Equal(t, int64(1_500_000_000_000_000), beach.CreationTime)
	assert.Equal(t, int64(1_500_000_000_000_000), beach.ModificationTime)
	assert.Equal(t, 2, byTitle["IMG_1.HEIC"].Meta.FileType)
	assert.Equal(t, 1, byTitle["clip.mp4"].Meta.FileType)
	back := fileBytes(t, again)
	sameBytes(t, []byte("mov bytes"), back["IMG_1.MOV"], "the live photo's video")

	sum = e.mustRestore()
	assert.Zero(t, sum.Uploaded, "a second restore uploads nothing")
	assert.Equal(t, 4, sum.Present)
}

// A record naming a folder or a file outside the export fails that file
// by name, and nothing of it is read or sent; a copy without its sidecar
// is left out.
func TestRestoreFromADesktopExportReadsNothingOutsideIt(t *testing.T) {
	for name, c := range map[string]struct {
		albums map[int64]string
		file   string
		want   string
	}{
		"album":  {map[int64]string{1: ".."}, "x.jpg", `album 1: ".." is not a folder of this export`},
		"file":   {map[int64]string{1: "Trip"}, "../x.jpg", `part name "../x.jpg" is not a name in its album folder`},
		"nested": {map[int64]string{1: "Trip/../../elsewhere"}, "x.jpg", "is not a folder of this export"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "Trip", desktopMetaDir), 0o755))
			writeJSON(t, filepath.Join(e.dir, "Trip", desktopMetaDir, c.file+".json"), takeout("x.jpg", 1))
			rec := map[string]any{"collectionExportNames": map[string]string{"1": c.albums[1]},
				"fileExportNames": map[string]string{"5_1_1": c.file}}
			writeJSON(t, filepath.Join(e.dir, desktopRecordName), rec)
			sum, err := e.restoreWith(e.options())
			require.NoError(t, err)
			require.NotEmpty(t, sum.Failures, "the file fails, by name")
			assert.Equal(t, desktopRecordName, sum.Failures[0].Title)
			assert.Contains(t, sum.Failures[0].Error, c.want)
			assert.Equal(t, len(sum.Failures), sum.Failed)
			assert.Zero(t, e.s.Requests("POST /files/upload-url"))
		})
	}

	e := newEnv(t)
	writeDesktopExport(t, e.dir, map[int64]string{1: "Trip"}, []desktopCopy{
		{id: 1, album: 1, name: "a.jpg", parts: map[string][]byte{"a.jpg": enteapitest.FakeJPEG("a")}},
		{id: 2, album: 1, name: "b.jpg", parts: map[string][]byte{"b.jpg": enteapitest.FakeJPEG("b")}, meta: takeout("b.jpg", 1)},
	})
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, 1, sum.Files)
	assert.Equal(t, []Failure{{Source: 1, Title: "file 1", Error: "no copy of it has its metadata JSON beside it"}}, sum.Failures)
}

// The desktop app's older JSON has no photoTakenTime: creationTime says
// when the photo was taken. A place at 0, 0 is no place (Google's way).
func TestRestoreFromADesktopExportReadsOlderTimesAndNoPlace(t *testing.T) {
	e := newEnv(t)
	old := takeout("old.jpg", 1_400_000_000)
	delete(old, "photoTakenTime")
	old["creationTime"] = map[string]any{"timestamp": 1_300_000_000} // a number, not a string
	old["geoData"] = map[string]float64{"latitude": 0, "longitude": 0}
	writeDesktopExport(t, e.dir, map[int64]string{1: "Trip"}, []desktopCopy{
		{id: 1, album: 1, name: "old.jpg", parts: map[string][]byte{"old.jpg": enteapitest.FakeJPEG("old")}, meta: old}})
	e.mustRestore()
	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	got := e.backedUp(again)
	require.Len(t, got, 1)
	for _, c := range got {
		assert.Equal(t, int64(1_300_000_000_000_000), c.Meta.CreationTime)
		assert.Equal(t, int64(1_400_000_000_000_000), c.Meta.ModificationTime)
		assert.Nil(t, c.Meta.Latitude, "0, 0 is no place")
	}
}

// A desktop sidecar's place at exactly 0, 0 is Google's "no place"; any
// other, one coordinate 0 included, is a place.
func TestDesktopPlaceAtZeroZeroIsNoPlace(t *testing.T) {
	for _, tc := range []struct {
		lat, lon float64
		place    bool
	}{{0, 0, false}, {0, 5, true}, {5, 0, true}, {43.5, 7.25, true}} {
		m := desktopMeta{Title: "x.jpg"}
		m.GeoData = &struct {
			Latitude  float64 `json:"latitude"`
			Longitude float64 `json:"longitude"`
		}{tc.lat, tc.lon}
		ef, err := m.asExportFile(1, []string{"x.jpg"})
		require.NoError(t, err)
		assert.Equal(t, tc.place, ef.Location != nil, "%v, %v", tc.lat, tc.lon)
	}
}
