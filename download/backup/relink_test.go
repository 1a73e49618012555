package backup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/state"
)

// inTwo saves file 11 in albums A and B (linked) and returns its record
// and both albums.
func (u *unit) inTwo() (*state.File, *state.Collection, *state.Collection) {
	u.t.Helper()
	a, c := u.album(1, "A")
	_, cb := u.album(2, "B")
	_, it := u.file(a, 11, "x.jpg", []byte("old"), 10)
	sf := u.saved(c, it, "x.jpg", []byte("old"))
	require.NoError(u.t, os.MkdirAll(filepath.Join(u.dir, "B"), 0o755))
	require.NoError(u.t, os.Link(filepath.Join(u.dir, "A/x.jpg"), filepath.Join(u.dir, "B/x.jpg")))
	sf.Entries[cb.ID] = &state.Entry{Name: "x.jpg", Parts: []string{"x.jpg"}, Meta: it.Meta}
	require.NoError(u.t, u.commit([]*state.File{sf}, nil))
	return sf, c, cb
}

func TestRelinkerRefreshesTheOtherAlbumsCopies(t *testing.T) {
	u := newUnit(t)
	sf, c, cb := u.inTwo()
	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/x.jpg")))
	u.write("A/x.jpg", "new")
	rec := record(&catalog.Item{FileID: 11, OwnerID: 1}, sf)
	u.relinker().others(rec, c)
	assert.Equal(t, "new", u.read("B/x.jpg"))
	assert.True(t, sameFile(filepath.Join(u.dir, "A/x.jpg"), filepath.Join(u.dir, "B/x.jpg")))
	assert.False(t, rec.Entries[cb.ID].Stale)
	assert.Contains(t, u.read("B/.meta/x.jpg.json"), `"album": "B"`, "the other copy's sidecar is written")
}

func TestRelinkerMarksACopyItCannotRefreshStaleAndTheNextRunRefreshesIt(t *testing.T) {
	u := newUnit(t)
	sf, c, cb := u.inTwo()
	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/x.jpg"))) // neither linked nor copied from
	rec := record(&catalog.Item{FileID: 11, OwnerID: 1}, sf)
	u.relinker().others(rec, c)
	assert.True(t, rec.Entries[cb.ID].Stale)
	assert.Equal(t, "old", u.read("B/x.jpg"))
	assert.Equal(t, 1, u.tally.summary().Failed)
	require.Len(t, u.kinds(FileFailed), 1)
	assert.Contains(t, u.kinds(FileFailed)[0].Err.Error(), "refreshing B/x.jpg")
	require.NoError(t, u.commit([]*state.File{rec}, nil))

	u.write("A/x.jpg", "new")
	require.NoError(t, u.relinker().stale())
	assert.Equal(t, "new", u.read("B/x.jpg"))
	assert.False(t, u.fileRecord(11).Entries[cb.ID].Stale, "recorded fresh")
}
