package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/state"
)

func TestAdopterTakesAnExportsFileByItsSidecarOnlyWhenItsHashMatches(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, good := u.file(a, 11, "x.jpg", []byte("good"), 10)
	_, bad := u.file(a, 12, "y.jpg", []byte("good too"), 10)
	u.write("A/x.jpg", "good")
	u.write("A/y.jpg", "damaged!")
	u.write("A/.meta/x.jpg.json", `{"info": {"id": 11, "fileNames": ["x.jpg"]}}`)
	u.write("A/.meta/y.jpg.json", `{"info": {"id": 12, "fileNames": ["y.jpg"]}}`)
	u.write("A/.meta/z.json", `{"info": {"id": 13, "fileNames": ["../out.jpg"]}}`)
	ad := u.adopter()
	require.NoError(t, ad.scanExport(c))
	rec := ad.adoptExisting(good, nil, a, c)
	require.NotNil(t, rec)
	assert.Equal(t, state.Saved, rec.Status)
	assert.Equal(t, []string{"x.jpg"}, rec.Entries[c.ID].Parts)
	assert.Nil(t, ad.adoptExisting(bad, nil, a, c), "damaged: downloaded instead")
	assert.Equal(t, &state.Entry{Name: "y.jpg", Parts: []string{"y.jpg"}, Meta: catalog.Meta{Title: "y.jpg"}},
		ad.previous(nil, c, bad), "and into its place")
	assert.Nil(t, ad.previous(nil, c, &catalog.Item{FileID: 13}), "a name that would leave the folder is ignored")
	assert.Equal(t, 1, u.tally.summary().Adopted)
	assert.Len(t, u.kinds(FileAdopted), 1)
}

func TestAdopterTakesBytesUnderAnotherNameFromAnotherFolder(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("the photo"), 10)
	u.write("Old export/Album/IMG_0001.jpg", "the photo")
	u.write("Old export/Album/other.jpg", "the other") // the same size, other bytes
	u.write("Old export/notes.txt", "a different size")
	rec := u.adopter().adoptContent(context.Background(), it, nil, a, c)
	require.NotNil(t, rec)
	assert.Equal(t, []string{"x.jpg"}, rec.Entries[c.ID].Parts, "named as it would be")
	assert.Equal(t, it.Meta.Hash, rec.LocalHash)
	assert.True(t, sameFile(filepath.Join(u.dir, "A/x.jpg"), filepath.Join(u.dir, "Old export/Album/IMG_0001.jpg")),
		"a link: the export's file stays where it is")
	assert.Contains(t, u.read("A/.meta/x.jpg.json"), `"id": 11`)
	assert.Equal(t, 1, u.tally.summary().Adopted)
	assert.Empty(t, u.lib.calls, "nothing downloaded")
	_, hashed, err := u.st.Local(filepath.Join("Old export", "notes.txt"))
	require.NoError(t, err)
	assert.False(t, hashed, "a file of another size is never read")
}

func TestAdopterTakesBytesInItsAlbumFolderWhereTheyAre(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("the photo"), 10)
	u.write("A/IMG_0001.jpg", "the photo")
	rec := u.adopter().adoptContent(context.Background(), it, nil, a, c)
	require.NotNil(t, rec)
	assert.Equal(t, []string{"IMG_0001.jpg"}, rec.Entries[c.ID].Parts, "kept under its name")
	assert.Empty(t, u.read("A/x.jpg"), "no second copy")
	assert.True(t, u.names.taken(1, "IMG_0001.jpg"))
}

func TestAdopterNeverTakesAClaimedOrHiddenOrMismatchedFile(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, saved := u.file(a, 11, "saved.jpg", []byte("same bytes"), 10)
	u.saved(c, saved, "saved.jpg", []byte("same bytes"))
	_, it := u.file(a, 12, "x.jpg", []byte("same bytes"), 10)
	u.write(".quak/trash/2026-01-01/A/old.jpg", "same bytes")
	u.write("By date/2026/x.jpg", "same bytes")
	u.write("B/.meta/x.json", "same bytes")
	u.write("B/near.jpg", "same bytez")
	ad := u.adopter()
	assert.Nil(t, ad.adoptContent(context.Background(), it, nil, a, c), "only a claimed copy holds those bytes")
	for _, rel := range []string{"A/saved.jpg", ".quak/trash/2026-01-01/A/old.jpg", "By date/2026/x.jpg", "B/.meta/x.json"} {
		_, hashed, err := u.st.Local(rel)
		require.NoError(t, err)
		assert.False(t, hashed, "%s is never looked at", rel)
	}
	_, hashed, err := u.st.Local(filepath.Join("B", "near.jpg"))
	require.NoError(t, err)
	assert.True(t, hashed, "a file of the size is hashed, and kept")
	assert.Zero(t, u.tally.summary().Adopted)

	saved2 := *it
	saved2.Meta.Hash = ""
	assert.Nil(t, ad.adoptContent(context.Background(), &saved2, nil, a, c), "no hash to match: never adopted")
	done := u.fileRecord(11)
	assert.Nil(t, ad.adoptContent(context.Background(), saved, done, a, c), "a saved file is not adopted again")
}

func TestAdopterHashesAFileOnceUntilItChanges(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("right"), 10)
	u.write("B/y.jpg", "wrong")
	when := time.Unix(1_700_000_000, 0)
	p := filepath.Join(u.dir, "B/y.jpg")
	require.NoError(t, os.Chtimes(p, when, when))
	assert.Nil(t, u.adopter().adoptContent(context.Background(), it, nil, a, c))

	// The same size and time: the kept hash is trusted, the file not read.
	require.NoError(t, os.WriteFile(p, []byte("right"), 0o644))
	require.NoError(t, os.Chtimes(p, when, when))
	assert.Nil(t, u.adopter().adoptContent(context.Background(), it, nil, a, c), "a later run does not hash it again")

	// Touched since: hashed again.
	require.NoError(t, os.Chtimes(p, when.Add(time.Second), when.Add(time.Second)))
	assert.NotNil(t, u.adopter().adoptContent(context.Background(), it, nil, a, c))
}

func TestAdopterTakesALivePhotosTwoParts(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	image, video := []byte("the still"), []byte("the motion")
	raw, _ := seal(t, a, 11, map[string]any{"title": "IMG_1.HEIC", "fileType": 2,
		"hash": hashOf(image) + ":" + hashOf(video)}, []byte("a zip"), 10)
	it, err := catalog.OpenItem(raw, a)
	require.NoError(t, err)
	u.write("Export/IMG_1.HEIC", string(image))
	u.write("Export/IMG_1.MOV", string(video))
	u.write("Export/IMG_2.HEIC", string(image)) // alone: no pair
	rec := u.adopter().adoptContent(context.Background(), it, nil, a, c)
	require.NotNil(t, rec)
	assert.Equal(t, []string{"IMG_1.HEIC", "IMG_1.MOV"}, rec.Entries[c.ID].Parts)
	assert.Equal(t, "the still", u.read("A/IMG_1.HEIC"))
	assert.Equal(t, "the motion", u.read("A/IMG_1.MOV"))
}

// An account restored from an `ente export`, backed up into that export's
// folder: other album and file ids, the same bytes. Nothing is downloaded.
func TestABackupIntoAFolderHoldingTheBytesDownloadsNothing(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Album")
	var files []*enteapitest.File
	for i := range 5 {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("IMG_%d.jpg", i), Size: 3000, Seed: byte(i + 1)}))
	}
	a.AddFile(enteapitest.FileSpec{Title: "LIVE.HEIC", FileType: 2,
		Data: enteapitest.LivePhoto("HEIC", []byte("still"), "MOV", []byte("motion"))})
	// What the export of the account it was restored from left: album 999,
	// file ids its own.
	export := filepath.Join(e.dir, "Album")
	require.NoError(t, os.MkdirAll(filepath.Join(export, ".meta"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(export, ".meta", "album_meta.json"), []byte(`{"id": 999, "albumName": "Album"}`), 0o644))
	for i, f := range files {
		name := fmt.Sprintf("IMG_%d.jpg", i)
		require.NoError(t, os.WriteFile(filepath.Join(export, name), f.Plaintext(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(export, ".meta", name+".json"),
			[]byte(fmt.Sprintf(`{"info": {"id": %d, "fileNames": [%q]}}`, 5000+i, name)), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(export, "LIVE.HEIC"), []byte("still"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(export, "LIVE.MOV"), []byte("motion"), 0o644))

	sum := e.mustRun()
	assert.Zero(t, e.downloads(), "every byte was there")
	assert.Zero(t, sum.New)
	assert.Equal(t, 6, sum.Adopted)
	assert.Zero(t, sum.Failed)
	for i, f := range files {
		e.same(fmt.Sprintf("Album_1/IMG_%d.jpg", i), f.Plaintext())
	}
	assert.Equal(t, []byte("still"), e.read("Album_1/LIVE.HEIC"))
	assert.Equal(t, []byte("motion"), e.read("Album_1/LIVE.MOV"))
	e.same("Album/IMG_0.jpg", files[0].Plaintext()) // the export's own stay as they were

	again := e.mustRun()
	assert.Zero(t, again.Adopted+again.New, "recorded: a second run has nothing to do")
	assert.Zero(t, e.downloads())
}
