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

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
)

var pruneDay = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func (e *env) prune(maxDelete int) (*Summary, error) {
	e.t.Helper()
	o := e.options()
	o.Prune, o.MaxDelete, o.Now = true, maxDelete, func() time.Time { return pruneDay }
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	return Run(context.Background(), o)
}

func (e *env) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.dir, rel))
	return err == nil
}

const trashToday = ".quak/trash/2026-12-01"

func TestPruneMovesExactlyTheDeleted(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	keep := a.AddFile(enteapitest.FileSpec{Title: "keep.jpg", Size: 10, Seed: 1})
	trashed := a.AddFile(enteapitest.FileSpec{Title: "trashed.jpg", Size: 10, Seed: 2})
	both := a.AddFile(enteapitest.FileSpec{Title: "both.jpg", Size: 10, Seed: 3})
	b.Add(both)
	gone := e.u.AddAlbum("Gone")
	gone.AddFile(enteapitest.FileSpec{Title: "g.jpg", Size: 10, Seed: 4})
	e.mustRun()
	// A local file named like a deleted one, in another album: matched by id, never by path.
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "B", "trashed.jpg"), []byte("mine"), 0o644))

	trashed.Trash()
	a.Remove(both)
	gone.Delete()
	e.mustRun() // without --prune nothing moves
	for _, p := range []string{"A/trashed.jpg", "A/both.jpg", "Gone/g.jpg"} {
		assert.True(t, e.exists(p), "%s moved without --prune", p)
	}

	sum, err := e.prune(100)
	require.NoError(t, err)
	assert.Empty(t, sum.PruneRefused)
	assert.Equal(t, 3, sum.Pruned)
	for _, p := range []string{"A/trashed.jpg", "A/.meta/trashed.jpg.json", "A/both.jpg", "Gone"} {
		assert.False(t, e.exists(p), "%s is still in place", p)
		assert.True(t, e.exists(filepath.Join(trashToday, p)), "%s is not in the trash", p)
	}
	e.same("A/keep.jpg", keep.Plaintext())
	e.same("B/both.jpg", both.Plaintext()) // still in B: only A's copy went
	e.same("B/trashed.jpg", []byte("mine"))
	e.same(trashToday+"/A/trashed.jpg", trashed.Plaintext())
	assert.Len(t, e.kinds(FilePruned), 3, "each album copy, a deleted album's too")
	assert.Len(t, e.kinds(AlbumPruned), 1)

	sum, err = e.prune(100)
	require.NoError(t, err)
	assert.Zero(t, sum.Pruned, "pruned once")
	assert.Equal(t, 2, sum.TotalFiles, "keep.jpg and both.jpg remain")
}

func TestPruneRefusesAboveMaxDelete(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	var files []*enteapitest.File
	for i := 0; i < 4; i++ {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i)}))
	}
	e.mustRun()
	for _, f := range files[:3] {
		f.Trash()
	}
	sum, err := e.prune(2)
	require.NoError(t, err)
	assert.Contains(t, sum.PruneRefused, "more than --max-delete 2")
	assert.Zero(t, sum.Pruned)
	for i := 0; i < 4; i++ {
		assert.True(t, e.exists(fmt.Sprintf("A/%d.jpg", i)))
	}
	assert.Len(t, e.kinds(PruneRefused), 1)
	sum, err = e.prune(3)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Pruned)
}

func TestPruneRefusesAfterAListingError(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	b.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10})
	e.mustRun()
	f.Trash()
	b.AddFile(enteapitest.FileSpec{Title: "z.jpg", Size: 10})
	for _, fault := range []enteapitest.Fault{enteapitest.Status(500), enteapitest.Status(404)} {
		e.s.Inject("GET /collections/v2/diff", enteapitest.Repeat(fault, 4)...)
		sum, err := e.prune(100)
		require.NoError(t, err)
		require.Positive(t, sum.AlbumsDeleted+sum.AlbumsFailed, "the injected error reached a listing")
		assert.Contains(t, sum.PruneRefused, "error-free listing")
		assert.True(t, e.exists("A/x.jpg"))
	}
}

func TestEmptyTrash(t *testing.T) {
	e := newEnv(t)
	e.mustRun()
	for _, day := range []string{"2026-10-01", "2026-10-31", "2026-11-01", "not-a-day"} {
		require.NoError(t, os.MkdirAll(filepath.Join(folder.At(e.dir).Trash(), day, "A"), 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(folder.At(e.dir).Trash(), "2026-10-01", "A", "x.jpg"), []byte("12345"), 0o600))
	cutoff := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	names := func(days []TrashDay) []string {
		var out []string
		for _, d := range days {
			out = append(out, d.Name)
		}
		return out
	}
	would, err := EmptyTrash(e.dir, cutoff, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"2026-10-01", "2026-10-31"}, names(would))
	assert.Equal(t, []string{filepath.Join("A", "x.jpg")}, would[0].Files)
	assert.Equal(t, int64(5), would[0].Bytes)
	assert.True(t, e.exists(".quak/trash/2026-10-01/A/x.jpg"), "a dry run deletes nothing")

	unlock, err := folder.At(e.dir).Lock()
	require.NoError(t, err)
	_, err = EmptyTrash(e.dir, cutoff, false)
	assert.ErrorIs(t, err, ErrLocked, "emptying the trash waits for no running backup")
	_, err = EmptyTrash(e.dir, cutoff, true)
	assert.NoError(t, err, "a dry run takes no lock")
	unlock()

	removed, err := EmptyTrash(e.dir, cutoff, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"2026-10-01", "2026-10-31"}, names(removed))
	assert.False(t, e.exists(".quak/trash/2026-10-01"))
	assert.True(t, e.exists(".quak/trash/2026-11-01"), "a day not wholly older than the cutoff stays")
	assert.True(t, e.exists(".quak/trash/not-a-day"), "only quak's day folders are touched")
}

// Pruned files leave the date view, and their sidecars go to the trash
// with them.
func TestPruneTakesSidecarsAndTheDateViewAlong(t *testing.T) {
	e := newEnv(t)
	e.views = Views{XMP: true, Sidecars: sidecars.Takeout, DateView: "YYYY", Zone: time.UTC}
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	at := func(y int) int64 { return time.Date(y, 6, 1, 0, 0, 0, 0, time.UTC).UnixMicro() }
	trashed := a.AddFile(enteapitest.FileSpec{Title: "trashed.jpg", Size: 10, Seed: 1, CreationTime: at(2001)})
	both := a.AddFile(enteapitest.FileSpec{Title: "both.jpg", Size: 10, Seed: 2, CreationTime: at(2002)})
	b.Add(both)
	gone := e.u.AddAlbum("Gone")
	gone.AddFile(enteapitest.FileSpec{Title: "g.jpg", Size: 10, Seed: 3, CreationTime: at(2003)})
	e.mustRun()
	require.True(t, e.exists("By date/2001/trashed.jpg"))
	require.True(t, e.exists("By date/2003/g.jpg.xmp"))

	trashed.Trash()
	a.Remove(both)
	gone.Delete()
	sum, err := e.prune(100)
	require.NoError(t, err)
	require.Equal(t, 3, sum.Pruned)
	for _, p := range []string{"A/trashed.jpg.xmp", "A/trashed.jpg.supplemental-metadata.json", "A/both.jpg.xmp", "Gone/g.jpg.xmp"} {
		assert.False(t, e.exists(p), "%s is still in place", p)
		assert.True(t, e.exists(filepath.Join(trashToday, p)), "%s is not in the trash", p)
	}
	for _, p := range []string{"By date/2001", "By date/2003"} {
		assert.False(t, e.exists(p), "%s: a pruned file is still in the date view", p)
	}
	assert.True(t, e.sameInode("By date/2002/both.jpg", "B/both.jpg"), "still in B: still in the date view")
	e.same(trashToday+"/A/trashed.jpg", trashed.Plaintext())
	assert.NotContains(t, string(e.read("B/both.jpg.xmp")), "<rdf:li>A</rdf:li>")
}

// A second name in the trash keeps an extension of up to 16 bytes (the
// dot counted) after its number, and a longer one in the stem.
func TestATrashNameKeepsItsExtensionUpTo16Bytes(t *testing.T) {
	ext16, ext17 := ".abcdefghijklmno", ".abcdefghijklmnop"
	assert.Equal(t, "d/x (2)"+ext16, numbered("d/x"+ext16, 2))
	assert.Equal(t, "d/x"+ext17+" (2)", numbered("d/x"+ext17, 2))
	assert.Equal(t, "d/x.jpg", numbered("d/x.jpg", 1))
}
