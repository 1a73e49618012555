package restore

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// Names with a glob's characters ([, *, ?) are names: an album "Trip
// [2020]" in an export folder "export [old]" is read, and an album "Best
// *" takes nothing of "Best of".
func TestRestoreFromAnExportReadsNamesWithPatternCharacters(t *testing.T) {
	e := newEnv(t)
	e.dir = filepath.Join(t.TempDir(), "export [old]")
	x, xo := one("x.jpg", enteapitest.FakeJPEG("x"))
	b, bo := one("b.jpg", enteapitest.FakeJPEG("b"))
	s, so := one("s.jpg", enteapitest.FakeJPEG("s"))
	writeExport(t, e.dir, map[string]int64{"Trip [2020]": 1, "Best of": 2, "Best *": 3}, map[string][]exportSpec{
		"Trip [2020]": {{id: 1, title: "x.jpg", parts: x, order: xo}},
		"Best of":     {{id: 2, title: "b.jpg", parts: b, order: bo}},
		"Best *":      {{id: 3, title: "s.jpg", parts: s, order: so}}})
	sum := e.mustRestore()
	assert.Equal(t, 3, sum.Uploaded)
	assert.Zero(t, sum.Added, "no file in an album that does not hold it")
}

// JSON quak did not find as a plain file inside DIR is not read: a .meta
// that links elsewhere, a sidecar that is a link or a pipe (which would
// block the run for good) each leave their file out or fail it by name.
func TestRestoreFromAnExportReadsNoJSONThroughALinkOrAPipe(t *testing.T) {
	e := newEnv(t)
	elsewhere := t.TempDir()
	x, xo := one("x.jpg", enteapitest.FakeJPEG("x"))
	writeExport(t, elsewhere, map[string]int64{"Trip": 1}, map[string][]exportSpec{"Trip": {{id: 1, title: "x.jpg", parts: x, order: xo}}})
	y, yo := one("y.jpg", enteapitest.FakeJPEG("y"))
	writeExport(t, e.dir, map[string]int64{"Home": 2}, map[string][]exportSpec{"Home": {{id: 2, title: "y.jpg", parts: y, order: yo}}})
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "Trip"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "Trip", "x.jpg"), x["x.jpg"], 0o644))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "Trip", exportMetaDir), filepath.Join(e.dir, "Trip", exportMetaDir)))
	side := filepath.Join(e.dir, "Home", exportMetaDir, "y.jpg.json")
	require.NoError(t, os.Rename(side, filepath.Join(elsewhere, "y.json")))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "y.json"), side))
	require.NoError(t, syscall.Mkfifo(filepath.Join(e.dir, "Home", exportMetaDir, "z.jpg.json"), 0o644))

	done := make(chan *Summary, 1)
	go func() {
		sum, err := e.restoreWith(e.options())
		assert.NoError(t, err)
		done <- sum
	}()
	var sum *Summary
	select {
	case sum = <-done:
	case <-awaitBound():
		require.Fail(t, "a pipe among the sidecars blocked the run")
	}
	assert.Zero(t, e.s.Requests("POST /files"), "nothing read through a link")
	titles := map[string]string{}
	for _, f := range sum.Failures {
		titles[f.Title] = f.Error
	}
	assert.Contains(t, titles[filepath.Join("Home", exportMetaDir, "y.jpg.json")], "not a plain file")
	assert.Contains(t, titles[filepath.Join("Home", exportMetaDir, "z.jpg.json")], "not a plain file")
	assert.Len(t, titles, 2, "Trip, whose .meta is a link, is no album of this export")
}

// Ente's CLI writes a live photo of which one part could be unpacked with
// one file name and both hashes: that file fails by name, the rest is
// restored. So does a second file under an id another album gave.
func TestRestoreFromAnExportFailsAHalfLivePhotoAndAnIDTwiceAlone(t *testing.T) {
	e := newEnv(t)
	good, goodOrder := one("good.jpg", enteapitest.FakeJPEG("good"))
	a, ao := one("a.jpg", enteapitest.FakeJPEG("a"))
	b, bo := one("b.jpg", enteapitest.FakeJPEG("b"))
	writeExport(t, e.dir, map[string]int64{"A": 1, "B": 2}, map[string][]exportSpec{
		"A": {{id: 1, title: "good.jpg", parts: good, order: goodOrder},
			{id: 2, title: "IMG_1.HEIC", parts: map[string][]byte{"IMG_1.HEIC": []byte("heic"), "IMG_1.MOV": []byte("mov")}, order: []string{"IMG_1.HEIC", "IMG_1.MOV"}},
			{id: 5, title: "a.jpg", parts: a, order: ao}},
		"B": {{id: 5, title: "b.jpg", parts: b, order: bo}}})
	side := filepath.Join(e.dir, "A", exportMetaDir, "IMG_1.HEIC.json")
	var m map[string]any
	require.NoError(t, readJSONFile(side, &m))
	m["info"].(map[string]any)["fileNames"] = []string{"IMG_1.HEIC"}
	writeJSON(t, side, m)

	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Uploaded, "good.jpg and a.jpg")
	require.Len(t, sum.Failures, 2)
	byTitle := map[string]string{}
	for _, f := range sum.Failures {
		byTitle[f.Title] = f.Error
	}
	assert.Contains(t, byTitle[filepath.Join("A", exportMetaDir, "IMG_1.HEIC.json")], "its hash has 2 parts, its file names 1: one part of a live photo was not exported")
	assert.Contains(t, byTitle[filepath.Join("B", exportMetaDir, "b.jpg.json")], "two files under one id")
}

// A video whose extension is not a known video's is known by its first
// bytes: it comes back as a video, and is found present in an account
// that has it.
func TestRestoreFromAnExportKnowsAVideoByItsBytes(t *testing.T) {
	e := newEnv(t)
	mp4 := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 64)...)
	trip := e.dst.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "clip.xyz", FileType: 1, Data: mp4})
	c, co := one("clip.xyz", mp4)
	writeExport(t, e.dir, map[string]int64{"Trip": 1}, map[string][]exportSpec{"Trip": {{id: 1, title: "clip.xyz", parts: c, order: co}}})
	sum := e.mustRestore()
	assert.Zero(t, sum.Uploaded)
	assert.Equal(t, 1, sum.Present, "the account's own video, by type, hash and title")
}

// An original whose commit was sent, perhaps applied, and not confirmed
// fails; another original of the same content in the same run then fails
// too rather than upload a second file. The next run finds the first.
func TestRestoreNeverUploadsATwinOfAnUnconfirmedCommit(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "same.jpg", Data: enteapitest.FakeJPEG("same")})
	e.src.AddAlbum("Family").AddFile(enteapitest.FileSpec{Title: "same.jpg", Data: enteapitest.FakeJPEG("same")})
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.LoseResponse())
	e.s.Inject("GET /collections/v2/diff", enteapitest.Repeat(enteapitest.Status(500), 200)...)
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Len(t, sum.Failures, 2)
	assert.Contains(t, sum.Failures[1].Error, errUnconfirmed.Error())
	assert.Equal(t, 1, e.s.Requests("POST /files"))

	e.s.ClearFaults("GET /collections/v2/diff")
	sum = e.mustRestore()
	assert.Equal(t, 1, e.s.Requests("POST /files"), "the lost commit had landed: nothing is sent again")
	assert.Equal(t, 2, sum.Present)
	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	assert.Len(t, e.backedUp(again), 1, "one file in the target")
}

// A restore writes nothing through a DIR/.quak that links elsewhere, and
// says what a missing DIR is.
func TestRestoreRefusesAStateFolderThatLinksElsewhere(t *testing.T) {
	e := newEnv(t)
	exportLibrary(t, e.dir)
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(e.dir, folder.StateDir)))
	_, err := e.restoreWith(e.options())
	var de *folder.DirError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "symbolic link")
	left, _ := os.ReadDir(elsewhere)
	assert.Empty(t, left, "nothing written through the link")

	o := e.options()
	o.Dir = filepath.Join(t.TempDir(), "nowhere")
	_, err = e.restoreWith(o)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "does not exist", de.Reason)

	o.Dir = filepath.Join(e.dir, "Trip")
	_, err = e.restoreWith(o)
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "it is an album folder of "+e.dir+": restore that folder")
}

// A video told from its bytes, in two albums: one file, added to the
// second album, whatever the other copy's name says.
func TestRestoreFromAnExportTakesASniffedVideoInTwoAlbumsOnce(t *testing.T) {
	e := newEnv(t)
	mp4 := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 64)...)
	c, co := one("clip.xyz", mp4)
	s := exportSpec{id: 1, title: "clip.xyz", parts: c, order: co}
	writeExport(t, e.dir, map[string]int64{"A": 1, "B": 2}, map[string][]exportSpec{"A": {s}, "B": {s}})
	sum := e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, 1, sum.Added)
}

// A copy of a desktop export without its JSON is still in its album when
// another copy's JSON describes the file.
func TestRestoreFromADesktopExportKeepsTheAlbumOfACopyWithoutJSON(t *testing.T) {
	e := newEnv(t)
	p := map[string][]byte{"a.jpg": enteapitest.FakeJPEG("a")}
	writeDesktopExport(t, e.dir, map[int64]string{1: "A", 2: "B"}, []desktopCopy{
		{id: 1, album: 1, name: "a.jpg", parts: p, meta: takeout("a.jpg", 1)},
		{id: 1, album: 2, name: "a.jpg", parts: p}})
	sum := e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, 1, sum.Added, "added to B too")
}

// A desktop export's metadata folder that is a link, or an album record
// naming quak's own folder, is no album: nothing of it is read or sent.
func TestRestoreFromADesktopExportReadsNoMetadataThroughALink(t *testing.T) {
	e := newEnv(t)
	elsewhere := t.TempDir()
	writeDesktopExport(t, elsewhere, map[int64]string{1: "Trip"}, []desktopCopy{
		{id: 1, album: 1, name: "a.jpg", parts: map[string][]byte{"a.jpg": enteapitest.FakeJPEG("a")}, meta: takeout("a.jpg", 1)}})
	writeDesktopExport(t, e.dir, map[int64]string{1: "Trip", 2: folder.StateDir}, []desktopCopy{
		{id: 1, album: 1, name: "a.jpg", parts: map[string][]byte{"a.jpg": enteapitest.FakeJPEG("a")}}})
	require.NoError(t, os.RemoveAll(filepath.Join(e.dir, "Trip", desktopMetaDir)))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "Trip", desktopMetaDir), filepath.Join(e.dir, "Trip", desktopMetaDir)))
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	assert.Zero(t, e.s.Requests("POST /files/upload-url"))
	require.NotEmpty(t, sum.Failures)
	assert.Contains(t, sum.Failures[0].Error, "is not a folder of this export")
	assert.Equal(t, len(sum.Failures), sum.Failed)
}

// A journal folder or a lock that links elsewhere is never written
// through.
func TestRestoreWritesNoJournalOrLockThroughALink(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	elsewhere := t.TempDir()
	restoreDir := filepath.Join(e.dir, folder.StateDir, "restore")
	require.NoError(t, os.MkdirAll(restoreDir, 0o700))
	// The journal's folder for this target: any name under restore/ is
	// checked, so plant the link at every name a journal may take.
	o := e.options()
	_, err := folder.At(e.dir).Journal(o.Target.Endpoint, o.Target.Keys.UserID)
	require.NoError(t, err)
	entries, err := os.ReadDir(restoreDir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	jdir := filepath.Join(restoreDir, entries[0].Name())
	require.NoError(t, os.RemoveAll(jdir))
	require.NoError(t, os.Symlink(elsewhere, jdir))
	_, err = e.restoreWith(o)
	var de *folder.DirError
	require.ErrorAs(t, err, &de)
	left, _ := os.ReadDir(elsewhere)
	assert.Empty(t, left, "nothing written through the journal's link")

	require.NoError(t, os.Remove(jdir))
	lock := filepath.Join(e.dir, folder.StateDir, "lock")
	require.NoError(t, os.Remove(lock))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "made"), lock))
	_, err = e.restoreWith(o)
	require.Error(t, err)
	_, err = os.Lstat(filepath.Join(elsewhere, "made"))
	assert.True(t, os.IsNotExist(err), "no lock file made through a link")
}

// A dry run counts a second original of one content as the real run
// would: present, added to its album, not a second upload.
func TestRestoreDryRunCountsTwinsAsTheRunWould(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "same.jpg", Data: enteapitest.FakeJPEG("same")})
	e.src.AddAlbum("Family").AddFile(enteapitest.FileSpec{Title: "same.jpg", Data: enteapitest.FakeJPEG("same")})
	two := e.src.AddAlbum("Both").AddFile(enteapitest.FileSpec{Title: "two.jpg", Data: enteapitest.FakeJPEG("two")})
	e.src.AddAlbum("Other").Add(two)
	e.backup(e.src, e.dir)
	o := e.options()
	o.DryRun = true
	dry, err := e.restoreWith(o)
	require.NoError(t, err)
	real := e.mustRestore()
	assert.Equal(t, []int{real.Uploaded, real.Present, real.Added, real.AlbumsCreated},
		[]int{dry.Uploaded, dry.Present, dry.Added, dry.AlbumsCreated})
	assert.Equal(t, 2, real.Uploaded)
	assert.Equal(t, 2, real.Added)
}

// An export with more unreadable files than quak names one by one: each
// counted, the first thousand named, and one line for the rest.
func TestRestoreFromAnExportNamesAThousandFailuresAndCountsTheRest(t *testing.T) {
	e := newEnv(t)
	names := map[string]string{}
	for i := range 1500 {
		names[strconv.Itoa(i+1)+"_1_1"] = "x" + strconv.Itoa(i) + ".jpg"
	}
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "Trip", desktopMetaDir), 0o755))
	writeJSON(t, filepath.Join(e.dir, desktopRecordName), map[string]any{"collectionExportNames": map[string]string{"1": "Trip"}, "fileExportNames": names})
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	assert.Equal(t, 1500, sum.Failed)
	require.Len(t, sum.Failures, maxPlanFailures+1)
	var rest []string
	for _, f := range sum.Failures {
		if f.Title == "the export" {
			rest = append(rest, f.Error)
		}
	}
	assert.Equal(t, []string{"500 more files could not be read"}, rest)
}

// A sidecar larger than any sidecar is is not read into memory: that file
// fails, saying why.
func TestRestoreFromAnExportRefusesAHugeSidecar(t *testing.T) {
	e := newEnv(t)
	x, xo := one("x.jpg", enteapitest.FakeJPEG("x"))
	writeExport(t, e.dir, map[string]int64{"Trip": 1}, map[string][]exportSpec{"Trip": {{id: 1, title: "x.jpg", parts: x, order: xo}}})
	require.NoError(t, os.Truncate(filepath.Join(e.dir, "Trip", exportMetaDir, "x.jpg.json"), maxJSON+1)) // sparse: no disk used
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Len(t, sum.Failures, 1)
	assert.Contains(t, sum.Failures[0].Error, "bytes, more than quak reads of such a file")
	assert.Zero(t, sum.Uploaded)
}
