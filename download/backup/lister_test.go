package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/errs"
)

// lister wires a lister over the bench and its library, downloading with
// save.
func (u *unit) lister(save saveFunc) *lister {
	seen := newProof()
	pages := u.pager(save, 2)
	pages.seen = seen
	adopt := u.adopter()
	return &lister{st: u.st, lib: u.lib, policy: noRetry(), shown: u.dir, albums: u.albums,
		recorder: &albumRecorder{root: u.dir, albums: u.albums, names: u.names, adopt: adopt, views: u.views, disk: u.disk,
			tally: u.tally, commit: u.commit},
		retries: &retrier{st: u.st, albums: u.albums, pages: pages, commit: u.commit},
		relink:  u.relinker(), pages: pages, views: u.views, seen: seen, down: &outage{}, tally: u.tally, commit: u.commit}
}

// listedAlbum is an album the library lists, not yet recorded.
func (u *unit) listedAlbum(id int64, name string) *catalog.Album {
	a := &catalog.Album{ID: id, Name: name, Type: "album", OwnerID: 1, UpdationTime: 100, Key: randomKey(u.t)}
	u.lib.addAlbum(a)
	return a
}

func TestListerWalksEachAlbumPageByPageAndCommitsItsCursor(t *testing.T) {
	u := newUnit(t)
	a := u.listedAlbum(1, "Trip")
	for i := range 5 {
		u.file(a, int64(10+i), fmt.Sprintf("%d.jpg", i), []byte{byte(i)}, int64(20+i))
	}
	u.lib.pageSize = 2
	s := &saves{}
	require.NoError(t, u.lister(s.save).sync(context.Background()))
	assert.Len(t, s.order, 5)
	for i := range 5 {
		f := u.fileRecord(int64(10 + i))
		require.NotNil(t, f, "file %d recorded", i)
		assert.Equal(t, []string{fmt.Sprintf("%d.jpg", i)}, f.Entries[1].Parts)
	}
	colls, err := u.st.Collections()
	require.NoError(t, err)
	assert.Equal(t, int64(100), colls[1].Cursor, "the cursor reaches the album's time")
	assert.Equal(t, int64(100), colls[1].Seen)
	assert.Equal(t, "Trip", colls[1].Folder)
	assert.Contains(t, u.read("Trip/.meta/album_meta.json"), `"albumName": "Trip"`)
	assert.Equal(t, []string{"albums", "diff 1", "diff 1", "diff 1"}, u.lib.calls, "three pages of two")

	// Nothing changed: one listing call.
	u.lib.calls = nil
	require.NoError(t, u.lister(s.save).sync(context.Background()))
	assert.Equal(t, []string{"albums"}, u.lib.calls)
}

func TestListerRecordsAnAlbumGoneMidListingAndGoesOn(t *testing.T) {
	u := newUnit(t)
	u.listedAlbum(1, "Gone")
	b := u.listedAlbum(2, "Kept")
	u.file(b, 20, "b.jpg", []byte("b"), 30)
	u.lib.fail["diff 1"] = &errs.ApiError{Status: 404}
	l := u.lister((&saves{}).save)
	require.NoError(t, l.sync(context.Background()))
	colls, err := u.st.Collections()
	require.NoError(t, err)
	assert.True(t, colls[1].Deleted, "its folder stays, the album is recorded deleted")
	assert.Equal(t, 1, l.seen.vanished, "no tombstone: a prune will not act")
	assert.NotNil(t, u.fileRecord(20), "the other album is listed")
	assert.Len(t, u.kinds(AlbumDeleted), 1)
}

func TestListerFailsAnAlbumThatDoesNotListAndStopsOnAnOutage(t *testing.T) {
	u := newUnit(t)
	u.listedAlbum(1, "A")
	u.lib.fail["diff 1"] = &errs.ApiError{Status: 500}
	require.NoError(t, u.lister((&saves{}).save).sync(context.Background()))
	assert.Equal(t, 1, u.tally.summary().AlbumsFailed)
	assert.Len(t, u.kinds(AlbumFailed), 1)

	u.lib.fail["diff 1"] = fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	var ue *UnreachableError
	assert.ErrorAs(t, u.lister((&saves{}).save).sync(context.Background()), &ue)

	u.lib.fail["albums"] = fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	assert.ErrorAs(t, u.lister((&saves{}).save).sync(context.Background()), &ue, "nothing can be done without the listing")
}

func TestListerStopsAListingThatDoesNotGoOn(t *testing.T) {
	u := newUnit(t)
	a := u.listedAlbum(1, "A")
	u.file(a, 10, "a.jpg", []byte("a"), 30)
	u.lib.alwaysMore = true // "more" after the last entry, and then nothing
	require.NoError(t, u.lister((&saves{}).save).sync(context.Background()))
	failed := u.kinds(AlbumFailed)
	require.Len(t, failed, 1)
	assert.ErrorIs(t, failed[0].Err, errStuck)
}

func TestListerLeavesOutWhatTheFiltersLeaveOutAndRefusesAPatternThatMatchesNothing(t *testing.T) {
	u := newUnit(t)
	a := u.listedAlbum(1, "Trip")
	u.file(a, 10, "a.jpg", []byte("a"), 30)
	u.listedAlbum(2, "Work")
	l := u.lister((&saves{}).save)
	l.filter.Albums = filter.Albums{Include: []string{"Work"}}
	require.NoError(t, l.sync(context.Background()))
	assert.Nil(t, u.fileRecord(10))
	assert.Equal(t, 1, u.tally.summary().AlbumsLeftOut)

	l = u.lister((&saves{}).save)
	l.filter.Albums = filter.Albums{Include: []string{"Tirp"}}
	var nm *filter.NoMatchError
	require.ErrorAs(t, l.sync(context.Background()), &nm)
	assert.Contains(t, nm.Nearest, "Trip")
}

func TestListerAppliesAnEntryListedAgainOnlyOnce(t *testing.T) {
	u := newUnit(t)
	a := u.listedAlbum(1, "A")
	u.file(a, 10, "a.jpg", []byte("a"), 30)
	s := &saves{}
	require.NoError(t, u.lister(s.save).sync(context.Background()))
	// The album's time moves: it is listed again from behind its cursor,
	// and the entry applied already is not applied again.
	u.lib.albums[1].UpdationTime = 200
	require.NoError(t, u.lister(s.save).sync(context.Background()))
	assert.Equal(t, []int64{10}, s.order)
	assert.Equal(t, []string{"albums", "diff 1", "albums", "diff 1"}, u.lib.calls)
}

func TestAlbumRecorderNamesMovesAndMarksAlbumFolders(t *testing.T) {
	u := newUnit(t)
	ar := u.lister((&saves{}).save).recorder
	c, err := ar.recordAlbum(&catalog.Album{ID: 1, Name: "Trip", Type: "album", OwnerID: 1})
	require.NoError(t, err)
	assert.Equal(t, "Trip", c.Folder)
	u.write("Other/mine.txt", "the user's")
	c2, err := ar.recordAlbum(&catalog.Album{ID: 2, Name: "Other", Type: "album", OwnerID: 1})
	require.NoError(t, err)
	assert.Equal(t, "Other_1", c2.Folder, "a folder quak did not make is left alone")

	_, err = ar.recordAlbum(&catalog.Album{ID: 1, Name: "Trip 2026", Type: "album", OwnerID: 1, Visibility: 1})
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(u.dir, "Trip 2026"))
	assert.NoDirExists(t, filepath.Join(u.dir, "Trip"))
	assert.Contains(t, u.read("Trip 2026/.meta/album_meta.json"), `"visibility": "archived"`)
	require.Len(t, u.kinds(AlbumRenamed), 1)

	_, err = ar.recordAlbum(&catalog.Album{ID: 1, Name: "Trip 2026", Type: "album", OwnerID: 1, Visibility: 2})
	require.NoError(t, err)
	assert.Contains(t, u.read("Trip 2026/.meta/album_meta.json"), `"visibility": "hidden"`)

	require.NoError(t, ar.gone(u.albums.all()[1]))
	assert.Contains(t, u.read("Trip 2026/.meta/album_meta.json"), `"isDeleted": true`)
	assert.DirExists(t, filepath.Join(u.dir, "Trip 2026"), "an archive keeps the folder")
	assert.Equal(t, 1, u.tally.summary().AlbumsDeleted)
	colls, err := u.st.Collections()
	require.NoError(t, err)
	assert.True(t, colls[1].Deleted)

	c, err = ar.recordAlbum(&catalog.Album{ID: 1, Name: "Trip 2026", Type: "album", OwnerID: 1})
	require.NoError(t, err)
	assert.False(t, c.Deleted, "back: shared again")
	assert.Zero(t, c.Cursor, "listed from scratch")
}

func TestAlbumRecorderAdoptsAnExportsFolderOfTheSameAlbum(t *testing.T) {
	u := newUnit(t)
	u.write("Trip/.meta/album_meta.json", `{"id": 1, "albumName": "Trip"}`)
	u.write("Work/.meta/album_meta.json", `{"id": 9, "albumName": "Work"}`)
	ar := u.lister((&saves{}).save).recorder
	c, err := ar.recordAlbum(&catalog.Album{ID: 1, Name: "Trip", Type: "album", OwnerID: 1})
	require.NoError(t, err)
	assert.Equal(t, "Trip", c.Folder, "the export's folder of this album")
	c, err = ar.recordAlbum(&catalog.Album{ID: 2, Name: "Work", Type: "album", OwnerID: 1})
	require.NoError(t, err)
	assert.Equal(t, "Work_1", c.Folder, "another album's is not taken")
	require.NoError(t, os.RemoveAll(filepath.Join(u.dir, "Work")))
}
