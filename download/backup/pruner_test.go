package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

var unitDay = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func (u *unit) pruner(seen *proof) *pruner {
	return &pruner{root: u.dir, trash: u.f.Trash(), st: u.st, lib: u.lib, policy: noRetry(), maxDelete: 10,
		now: func() time.Time { return unitDay }, seen: seen, views: u.views, disk: u.disk, down: &outage{}, tally: u.tally,
		commit: u.commit}
}

// markedGone saves file id in c and marks its copy deleted on the server.
func (u *unit) markedGone(c *state.Collection, id int64, name string) *state.File {
	u.t.Helper()
	a := u.lib.albums[c.ID]
	_, it := u.file(a, id, name, []byte(name), 10)
	sf := u.saved(c, it, name, []byte(name))
	sf.Entries[c.ID].Deleted = true
	require.NoError(u.t, u.commit([]*state.File{sf}, nil))
	return sf
}

func TestPrunerMovesWhatTheListingProvesDeletedToTheTrash(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.markedGone(c, 11, "x.jpg")
	seen := newProof()
	seen.goneNow[entryKey{11, 1}] = true
	require.NoError(t, u.pruner(seen).prune(context.Background()))
	assert.Empty(t, u.read("A/x.jpg"))
	assert.Equal(t, "x.jpg", u.read(".quak/trash/2026-03-04/A/x.jpg"), "kept in today's trash, path and all")
	assert.Contains(t, u.read(".quak/trash/2026-03-04/A/.meta/x.jpg.json"), `"id": 11`, "with its sidecar")
	f := u.fileRecord(11)
	assert.Nil(t, f.Entries[1], "the entry goes")
	require.Len(t, f.Trash, 1, "where it went is remembered")
	assert.Equal(t, filepath.Join(".quak/trash/2026-03-04/A/x.jpg"), f.Trash[0].Parts[0])
	assert.Equal(t, 1, u.tally.summary().Pruned)
	assert.Len(t, u.kinds(FilePruned), 1)
	assert.Empty(t, u.lib.calls, "the listing proved it: nothing asked")
}

func TestPrunerAsksTheServerAboutAnEarlierRunsMark(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.markedGone(c, 11, "gone.jpg")
	u.markedGone(c, 12, "live.jpg") // listed live: markedGone added its entry
	u.lib.entries[1] = u.lib.entries[1][1:]
	u.markedGone(c, 13, "unknown.jpg")
	u.lib.fail["entry 1/13"] = &errs.ApiError{Status: 500}
	require.NoError(t, u.pruner(newProof()).prune(context.Background()))
	assert.Empty(t, u.read("A/gone.jpg"), "404: proven")
	assert.Equal(t, "live.jpg", u.read("A/live.jpg"))
	assert.False(t, u.fileRecord(12).Entries[1].Deleted, "a wrong mark is cleared")
	assert.Equal(t, "unknown.jpg", u.read("A/unknown.jpg"), "not confirmed: kept")
	kept := u.kinds(PruneKept)
	require.Len(t, kept, 2)
	assert.Contains(t, kept[1].Err.Error(), "could not be confirmed")
}

func TestPrunerMovesNothingAfterErrorsFiltersOrTooManyDeletions(t *testing.T) {
	for name, set := range map[string]func(u *unit, pr *pruner){
		"errors":     func(u *unit, _ *pruner) { u.tally.failed(folderFailure(5), 1, errors.New("x")) },
		"vanished":   func(_ *unit, pr *pruner) { pr.seen.vanished = 1 },
		"filters":    func(_ *unit, pr *pruner) { pr.filter = filter.Set{NoHidden: true} },
		"max-delete": func(_ *unit, pr *pruner) { pr.maxDelete = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			u := newUnit(t)
			_, c := u.album(1, "A")
			u.markedGone(c, 11, "x.jpg")
			u.markedGone(c, 12, "y.jpg")
			seen := newProof()
			seen.goneNow[entryKey{11, 1}], seen.goneNow[entryKey{12, 1}] = true, true
			pr := u.pruner(seen)
			set(u, pr)
			require.NoError(t, pr.prune(context.Background()))
			assert.Equal(t, "x.jpg", u.read("A/x.jpg"))
			assert.NotEmpty(t, u.tally.summary().PruneRefused)
			assert.Len(t, u.kinds(WouldPrune), 2, "what would have moved is named")
			assert.Zero(t, u.tally.summary().Pruned)
		})
	}
}

func TestPrunerMovesADeletedAlbumsFolderOnceItsFilesAreGone(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	c.Deleted = true
	require.NoError(t, u.commit(nil, c))
	require.NoError(t, u.views.WriteAlbumMeta(c))
	u.write("A/notes.txt", "the user's")
	seen := newProof()
	seen.tombstones[1] = true
	require.NoError(t, u.pruner(seen).prune(context.Background()))
	assert.Equal(t, "x", u.read(".quak/trash/2026-03-04/A/x.jpg"))
	assert.NotEmpty(t, u.read(".quak/trash/2026-03-04/A/.meta/album_meta.json"))
	assert.Equal(t, "the user's", u.read("A/notes.txt"), "what quak did not save stays")
	colls, err := u.st.Collections()
	require.NoError(t, err)
	assert.True(t, colls[1].Pruned)
	assert.Len(t, u.kinds(AlbumPruned), 1)

	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/notes.txt")))
	c2 := colls[1]
	c2.Pruned = false
	require.NoError(t, u.commit(nil, c2))
	require.NoError(t, u.pruner(seen).prune(context.Background()))
	assert.NoDirExists(t, filepath.Join(u.dir, "A"), "an emptied folder goes")
}

func TestEmptyTrashDeletesOnlyDaysBeforeTheCutoff(t *testing.T) {
	u := newUnit(t)
	u.write(".quak/trash/2026-01-01/A/x.jpg", "12345")
	u.write(".quak/trash/2026-03-04/A/y.jpg", "y")
	days, err := EmptyTrash(u.dir, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), true)
	require.NoError(t, err)
	require.Len(t, days, 1)
	assert.Equal(t, TrashDay{Name: "2026-01-01", Files: []string{filepath.Join("A", "x.jpg")}, Bytes: 5}, days[0])
	assert.Equal(t, "12345", u.read(".quak/trash/2026-01-01/A/x.jpg"), "a dry run deletes nothing")
	_, err = EmptyTrash(u.dir, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), false)
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(u.dir, ".quak/trash/2026-01-01"))
	assert.Equal(t, "y", u.read(".quak/trash/2026-03-04/A/y.jpg"))
}
