package backup

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

func (u *unit) losses() *losses {
	return &losses{root: u.dir, st: u.st, lib: u.lib, policy: noRetry(), down: &outage{}, tally: u.tally}
}

func TestLossesFindWhatIsMissingOnDiskInTheAlbumsTheRunTakes(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	_, cb := u.album(2, "B")
	u.saved(c, mustItem(u, 11, "kept.jpg"), "kept.jpg", []byte("x"))
	u.saved(c, mustItem(u, 12, "gone.jpg"), "gone.jpg", []byte("x"))
	_, it := u.file(u.lib.albums[2], 13, "b.jpg", []byte("x"), 10)
	u.saved(cb, it, "b.jpg", []byte("x"))
	u.markedGone(c, 14, "deleted.jpg") // deleted on the server: not asked for again
	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/gone.jpg")))
	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/deleted.jpg")))
	require.NoError(t, os.Remove(filepath.Join(u.dir, "B/b.jpg")))
	l := u.losses()
	l.filter = filter.Set{Albums: filter.Albums{Exclude: []string{"B"}}}
	ids, err := l.missingLocally()
	require.NoError(t, err)
	assert.Equal(t, []int64{12}, ids)
}

func TestLossesMarkAFileForRedownloadWithItsCurrentEntry(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	require.NoError(t, u.losses().markForRedownload(context.Background(), []int64{11, 99}))
	f := u.fileRecord(11)
	assert.Equal(t, state.Failed, f.Status, "retried first, downloaded in place")
	require.NotNil(t, f.Pending)
	assert.Equal(t, int64(11), f.Pending.ID)
	assert.Equal(t, "missing or changed on disk", f.Error)
}

func TestLossesNameAFileNoAlbumGivesAndFailOneRefused(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	u.saved(c, mustItem(u, 12, "y.jpg"), "y.jpg", []byte("x"))
	u.lib.fail["entry 1/11"] = &errs.ApiError{Status: 404}
	u.lib.fail["entry 1/12"] = &errs.ApiError{Status: 403}
	require.NoError(t, u.losses().markForRedownload(context.Background(), []int64{11, 12}))
	assert.Equal(t, state.Saved, u.fileRecord(11).Status, "left as it is")
	warned := u.kinds(FileWarning)
	require.Len(t, warned, 1)
	assert.Equal(t, int64(11), warned[0].FileID)
	assert.Equal(t, 1, u.tally.summary().Failed, "a refusal fails the file every run")
	assert.Contains(t, u.kinds(FileFailed)[0].Err.Error(), "403")
}

func (u *unit) spaceCheck(free int64) *spaceCheck {
	return &spaceCheck{st: u.st, lib: u.lib, policy: noRetry(), root: u.dir, shown: u.dir, tmp: u.f.Temp(), albums: u.albums,
		down: &outage{}, freeSpace: func(string) (int64, error) { return free, nil }}
}

func TestSpaceCheckRefusesWhatDoesNotFitCountingEachFileOnce(t *testing.T) {
	u := newUnit(t)
	a := u.listedAlbum(1, "A")
	b := u.listedAlbum(2, "B")
	big := make([]byte, 1<<20)
	u.file(a, 11, "big.jpg", big, 10)
	raw, _ := u.file(a, 12, "small.jpg", []byte("s"), 11)
	inB := *raw
	inB.CollectionID = 2
	u.lib.entries[2] = append(u.lib.entries[2], inB) // the same file in two albums
	albums := map[int64]*catalog.Album{1: a, 2: b}
	need, largest, err := u.spaceCheck(0).plan(context.Background(), albums)
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20+1), need)
	assert.Equal(t, int64(11), largest.id)
	assert.Equal(t, "A", largest.album)

	err = u.spaceCheck(need+spaceMargin(need)-1).check(context.Background(), albums)
	var de *DirError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "file 11 in album \"A\"")
	require.NoError(t, u.spaceCheck(need+spaceMargin(need)).check(context.Background(), albums))
	u.write(".quak/tmp/.quak-tmp-kept", "k") // kept partials are room the run gets back
	require.NoError(t, u.spaceCheck(need+spaceMargin(need)-1).check(context.Background(), albums))
}

func TestRetrierRetriesLastRunsFailuresBeforeAnythingIsListed(t *testing.T) {
	u := newUnit(t)
	a, _ := u.album(1, "A")
	raw, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	rec := failedRecord(u.tally, nil, raw, a, "x.jpg", errs.ErrCorrupted)
	require.NoError(t, u.commit([]*state.File{rec}, nil))
	s := &saves{}
	r := &retrier{st: u.st, albums: u.albums, pages: u.pager(s.save, 1), commit: u.commit}
	require.NoError(t, r.retry(context.Background(), map[int64]*catalog.Album{1: a}))
	assert.Equal(t, []int64{11}, s.order)
	assert.Equal(t, state.Saved, u.fileRecord(11).Status)
	assert.Equal(t, it.Meta.Hash, u.fileRecord(11).LocalHash)
	assert.Empty(t, u.lib.calls, "from its record, nothing listed")
}
