package backup

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

func TestUpdaterLinksASavedFileIntoAnotherAlbum(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	b, cb := u.album(2, "B")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	sf := u.saved(c, it, "x.jpg", []byte("x"))
	_, inB := u.file(b, 11, "x.jpg", []byte("x"), 20)
	rec, again, err := u.updater().update(inB, sf, b, cb)
	require.NoError(t, err)
	assert.False(t, again, "no second download")
	require.NotNil(t, rec)
	assert.Equal(t, []string{"x.jpg"}, rec.Entries[cb.ID].Parts)
	assert.True(t, sameFile(filepath.Join(u.dir, "A/x.jpg"), filepath.Join(u.dir, "B/x.jpg")), "a hard link")
	assert.Contains(t, u.read("B/.meta/x.jpg.json"), `"album": "B"`)
	assert.Equal(t, 1, u.tally.summary().Linked)
	assert.Len(t, u.kinds(FileLinked), 1)
	assert.Empty(t, u.lib.calls)
}

func TestUpdaterAppliesAnEditAndARename(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	sf := u.saved(c, it, "x.jpg", []byte("x"))
	up := u.updater()

	same := *it
	rec, again, err := up.update(&same, sf, a, c)
	require.NoError(t, err)
	assert.False(t, again)
	assert.Nil(t, rec, "nothing changed")

	edited := *it
	edited.Meta.Caption = "at the lake"
	edited.Meta.CreationTime = 1_500_000_000_000_000
	rec, again, err = up.update(&edited, sf, a, c)
	require.NoError(t, err)
	assert.False(t, again)
	require.NotNil(t, rec)
	assert.Contains(t, u.read("A/.meta/x.jpg.json"), "at the lake")
	fi, err := os.Stat(filepath.Join(u.dir, "A/x.jpg"))
	require.NoError(t, err)
	assert.Equal(t, time.UnixMicro(1_500_000_000_000_000).UTC(), fi.ModTime().UTC(), "the new creation time is the mtime")
	assert.Equal(t, 1, u.tally.summary().Updated)
	require.NoError(t, u.commit([]*state.File{rec}, nil))

	renamed := edited
	renamed.Meta.Title = "lake.jpg"
	rec, _, err = up.update(&renamed, rec, a, c)
	require.NoError(t, err)
	assert.Equal(t, []string{"lake.jpg"}, rec.Entries[c.ID].Parts)
	assert.Equal(t, "x", u.read("A/lake.jpg"))
	assert.Empty(t, u.read("A/x.jpg"))
	assert.Empty(t, u.read("A/.meta/x.jpg.json"), "the old name's sidecar goes")
	assert.Contains(t, u.read("A/.meta/lake.jpg.json"), `"title": "lake.jpg"`)
	require.Len(t, u.kinds(FileRenamed), 1)
	assert.Equal(t, "A/lake.jpg", u.kinds(FileRenamed)[0].Path)
}

func TestUpdaterRenamesACaseOnlyChangeInPlace(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "IMG.JPG", []byte("x"), 10)
	sf := u.saved(c, it, "IMG.JPG", []byte("x"))
	lower := *it
	lower.Meta.Title = "img.jpg"
	rec, _, err := u.updater().update(&lower, sf, a, c)
	require.NoError(t, err)
	assert.Equal(t, []string{"img.jpg"}, rec.Entries[c.ID].Parts, "the same name in another case, not img_1.jpg")
	assert.Equal(t, "x", u.read("A/img.jpg"))
}

func TestUpdaterAsksForADownloadWhenTheCopyIsGone(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	b, cb := u.album(2, "B")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	sf := u.saved(c, it, "x.jpg", []byte("x"))
	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/x.jpg")))
	_, again, err := u.updater().update(it, sf, a, c)
	require.NoError(t, err)
	assert.True(t, again, "its own copy is gone")
	_, again, err = u.updater().update(it, sf, b, cb)
	require.NoError(t, err)
	assert.True(t, again, "no copy to link from")
}

// trashed moves file sf's copy in c to the trash as --prune would, and
// records it there.
func (u *unit) trashed(sf *state.File, c *state.Collection, name string) *state.File {
	u.t.Helper()
	rel := filepath.Join(".quak", "trash", "2026-01-01", c.Folder, name)
	require.NoError(u.t, os.MkdirAll(filepath.Join(u.dir, filepath.Dir(rel)), 0o755))
	require.NoError(u.t, os.Rename(filepath.Join(u.dir, c.Folder, name), filepath.Join(u.dir, rel)))
	rec := *sf
	rec.Entries = map[int64]*state.Entry{}
	rec.Trash = []state.TrashCopy{{CollectionID: c.ID, Parts: []string{rel}}}
	require.NoError(u.t, u.commit([]*state.File{&rec}, nil))
	u.names.inAlbum(c.ID, func(n *layout.Namer) { n.Release(name) }) // as the next run's names would have it
	return &rec
}

func TestUntrasherMovesAnIntactCopyBackAndLeavesADamagedOne(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	sf := u.trashed(u.saved(c, it, "x.jpg", []byte("x")), c, "x.jpg")
	rec := u.untrasher().fromTrash(it, sf, a, c)
	require.NotNil(t, rec)
	assert.Equal(t, "x", u.read("A/x.jpg"))
	assert.Empty(t, rec.Trash, "no longer in the trash")
	assert.Equal(t, 1, u.tally.summary().Restored)
	assert.Len(t, u.kinds(FileRestored), 1)

	_, it2 := u.file(a, 12, "y.jpg", []byte("y"), 10)
	sf2 := u.trashed(u.saved(c, it2, "y.jpg", []byte("y")), c, "y.jpg")
	u.write(sf2.Trash[0].Parts[0], "changed in the trash")
	assert.Nil(t, u.untrasher().fromTrash(it2, sf2, a, c), "not what was saved: downloaded instead")
	assert.Empty(t, u.read("A/y.jpg"))
}

func TestUpdaterLinksFromTheTrashWhenNoAlbumCopyIsLeft(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	sf := u.trashed(u.saved(c, it, "x.jpg", []byte("x")), c, "x.jpg")
	rec, again, err := u.updater().update(it, sf, a, c)
	require.NoError(t, err)
	assert.False(t, again)
	require.NotNil(t, rec)
	assert.Equal(t, "x", u.read("A/x.jpg"))
}

func TestRefresherRestoresALostMtimeAndSidecar(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	sf := u.saved(c, it, "x.jpg", []byte("x"))
	require.NoError(t, os.Chtimes(filepath.Join(u.dir, "A/x.jpg"), micros(it.Meta.CreationTime), micros(it.Meta.CreationTime)))
	up := u.updater()
	r := &refresher{update: up, albums: u.albums, disk: u.disk, views: u.views, tally: u.tally}
	rec, err := r.refresh(it, sf, a, c)
	require.NoError(t, err)
	assert.Nil(t, rec)
	assert.Zero(t, u.tally.summary().Updated, "nothing differs")

	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/.meta/x.jpg.json")))
	_, err = r.refresh(it, sf, a, c)
	require.NoError(t, err)
	assert.Contains(t, u.read("A/.meta/x.jpg.json"), `"id": 11`)
	assert.Equal(t, 1, u.tally.summary().Updated)

	require.NoError(t, os.Chtimes(filepath.Join(u.dir, "A/x.jpg"), time.Unix(5, 0), time.Unix(5, 0)))
	_, err = r.refresh(it, sf, a, c)
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(u.dir, "A/x.jpg"))
	require.NoError(t, err)
	assert.Equal(t, micros(it.Meta.CreationTime), fi.ModTime().UTC())
	assert.Equal(t, 2, u.tally.summary().Updated)
	assert.Len(t, u.kinds(MetadataUpdated), 2)
}
