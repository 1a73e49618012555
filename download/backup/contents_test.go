package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

func TestAlbumSetFindsACurrentCopyAndMakesFoldersInsideDIROnly(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	_, cb := u.album(2, "B")
	sf := u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	sf.Entries[cb.ID] = &state.Entry{Name: "x.jpg", Parts: []string{"x.jpg"}, Stale: true}
	e, from, dir := u.albums.source(sf)
	require.NotNil(t, e)
	assert.Equal(t, c, from, "the stale copy is never a source")
	assert.Equal(t, filepath.Join(u.dir, "A"), dir)
	assert.False(t, u.albums.partsExist(cb, &state.Entry{Parts: []string{"x.jpg"}}))
	assert.False(t, u.albums.partsExist(c, &state.Entry{}), "an entry of no parts is not there")
	require.NoError(t, os.Remove(filepath.Join(u.dir, "A/x.jpg")))
	e, _, _ = u.albums.source(sf)
	assert.Nil(t, e, "no copy left")

	_, err := u.albums.dir(&state.Collection{Folder: "../out"})
	assert.ErrorIs(t, err, layout.ErrOutside)
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(u.dir, "L")))
	_, err = u.albums.dir(&state.Collection{Folder: "L"})
	var se *SymlinkError
	assert.ErrorAs(t, err, &se, "never through a link")
}

func TestNamesAreUniqueInEachFolderAndReadFromTheState(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	n := newNames(u.st) // a later run's
	assert.True(t, n.taken(1, "X.JPG"), "taken whatever the case")
	assert.True(t, n.taken(1, ".meta"), "reserved")
	assert.False(t, n.taken(2, "x.jpg"), "per album")
	var top string
	n.top(map[int64]*state.Collection{1: c}, func(nm *layout.Namer) { top = nm.Unique("A") })
	assert.Equal(t, "A_1", top)
	n.top(nil, func(nm *layout.Namer) { top = nm.Unique(folder.StateDir) })
	assert.NotEqual(t, folder.StateDir, top, "the state's folder is never an album's")
	n.top(nil, func(nm *layout.Namer) { top = nm.Unique(DateViewDir) })
	assert.Equal(t, DateViewDir+"_1", top)
}

func TestPartNamesKeepANameFreeTheirOwnAndDropWhatIsReplaced(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	sf := u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	old := sf.Entries[c.ID]
	assert.Equal(t, []string{"x.jpg"}, u.parts.name(c, old, 11, "x.jpg", []string{""}), "the same title keeps its name")
	assert.Equal(t, []string{"x_1.jpg"}, u.parts.name(c, nil, 12, "x.jpg", []string{""}))
	assert.Equal(t, []string{"live.heic", "live.mov"}, u.parts.name(c, nil, 13, "live.HEIC", []string{".heic", ".mov"}))
	u.write("A/.meta/z.jpg.json", `{"info": {"id": 77}}`)
	assert.Equal(t, []string{"z_1.jpg"}, u.parts.name(c, nil, 14, "z.jpg", []string{""}), "another file's sidecar has the name")
	u.write("A/w.jpg", "left by a killed run")
	u.write("A/.meta/w.jpg.json", `{"info": {"id": 15, "fileNames": ["w.jpg"]}}`)
	assert.Equal(t, []string{"w.jpg"}, u.parts.name(c, nil, 15, "w.jpg", []string{""}), "its own sidecar names it")

	named := u.parts.name(c, nil, 16, "v.jpg", []string{""})
	u.parts.release(c, named, nil)
	assert.Equal(t, named, u.parts.name(c, nil, 17, "v.jpg", []string{""}), "a released name is free")
	u.parts.release(c, []string{"x.jpg"}, old)
	assert.Equal(t, []string{"x_2.jpg"}, u.parts.name(c, nil, 18, "x.jpg", []string{""}), "the replaced copy's name stays taken")

	u.write("A/x.jpg.xmp", "quak's")
	old.Sidecars, old.SidecarHashes = []string{"x.jpg.xmp"}, nil
	own, hashes := u.parts.dropOld(c, filepath.Join(u.dir, "A"), old, 11, []string{"X.JPG"})
	assert.Equal(t, []string{"x.jpg.xmp"}, own, "a name kept in another case is the same file")
	assert.Nil(t, hashes)
	assert.Equal(t, "x", u.read("A/x.jpg"))
	own, _ = u.parts.dropOld(c, filepath.Join(u.dir, "A"), old, 11, []string{"y.jpg"})
	assert.Empty(t, own)
	assert.Empty(t, u.read("A/x.jpg"), "the old part goes")
	assert.Empty(t, u.read("A/x.jpg.xmp"), "with quak's sidecar")
	assert.Empty(t, u.read("A/.meta/x.jpg.json"))
	own, hashes = u.parts.dropOld(c, filepath.Join(u.dir, "A"), nil, 11, nil)
	assert.Nil(t, own)
	assert.Nil(t, hashes)
}

func TestExpectedHashesLastUntilTheirFilesAreCommitted(t *testing.T) {
	x := &expected{}
	x.expect(1, "")
	assert.Empty(t, x.hash(1), "no hash, nothing to recognise")
	x.expect(1, "h1")
	x.expect(2, "h2")
	x.forget([]*state.File{{ID: 1}})
	assert.Empty(t, x.hash(1))
	assert.Equal(t, "h2", x.hash(2))
	assert.Equal(t, map[string]string{"a": "1"}, ownHashes(map[string]string{"a": "1", "b": "2"}, []string{"a", "c"}))
	assert.Nil(t, ownHashes(map[string]string{"b": "2"}, []string{"a"}))
}

func TestRecordsAreCopiesAndAFailureKeepsOneEntryPerAlbum(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	sf := u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	rec := record(mustItem(u, 11, "x.jpg"), sf)
	rec.Entries[c.ID].Name = "changed"
	assert.Equal(t, "x.jpg", sf.Entries[c.ID].Name, "the original is untouched")
	assert.Same(t, rec, stamp(rec, c.ID, 99))
	assert.Equal(t, int64(99), rec.Entries[c.ID].Updated)

	raw, _ := u.file(a, 12, "y.jpg", []byte("y"), 10)
	f := failedRecord(u.tally, nil, raw, a, "y.jpg", errors.New("no"))
	assert.Equal(t, state.Failed, f.Status)
	other := *raw
	other.CollectionID = 2
	pend(f, &other)
	again := *raw
	again.UpdationTime = 20
	pend(f, &again)
	assert.Equal(t, int64(20), f.Pending.UpdationTime, "the latest entry of album 1")
	require.Len(t, f.PendingAlso, 1)
	assert.Equal(t, int64(2), f.PendingAlso[0].CollectionID)
	assert.Nil(t, stamp(nil, 1, 5))
	assert.Nil(t, stamp(f, 1, 5).Entries[1], "a failed record keeps its entry pending")
	assert.True(t, fresh(nil))
	assert.True(t, fresh(f))
	assert.False(t, fresh(sf))
	assert.True(t, saved(&state.File{Status: state.HashMismatch}))
	assert.False(t, saved(&state.File{Status: state.Skipped}))
}

func TestTallyForgivesAFailureASaveLaterInTheRunMakesMoot(t *testing.T) {
	var told []Event
	tl := newTally(func(e Event) { told = append(told, e) }, unitDay)
	tl.failedFile(folder.Failure{FileID: 1, Album: "A", Title: "x"}, 1, errs.ErrCorrupted)
	tl.failed(folder.Failure{FileID: 2}, 0, errors.New("other"))
	sum := tl.summary()
	assert.Equal(t, 2, sum.Failed)
	assert.Equal(t, map[string]int{ReasonCorrupt: 1, ReasonOther: 1}, sum.Reasons)
	tl.forgive(1)
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, map[string]int{ReasonOther: 1}, sum.Reasons)
	require.Len(t, sum.Failures, 1)
	assert.Equal(t, int64(2), sum.Failures[0].FileID)
	tl.forgive(2)
	assert.Equal(t, 1, sum.Failed, "only what failedFile counted is forgiven")
	assert.True(t, tl.wasTouched(1))
	assert.False(t, tl.wasTouched(3))
	require.Len(t, told, 2)
	assert.Equal(t, FileFailed, told[0].Kind)
	newTally(nil, unitDay).emit(Event{}) // no one listens: nothing to tell
}

func TestTallyTotalsWhatTheBackupHolds(t *testing.T) {
	u := newUnit(t)
	_, c := u.album(1, "A")
	u.saved(c, mustItem(u, 11, "x.jpg"), "x.jpg", []byte("x"))
	u.saved(c, mustItem(u, 12, "y.jpg"), "y.jpg", []byte("x"))
	require.NoError(t, u.commit([]*state.File{{ID: 13, Status: state.Skipped}}, nil))
	u.tally.did(12, func(*Summary) {})
	u.tally.total(u.st)
	sum := u.tally.summary()
	assert.Equal(t, 2, sum.TotalFiles)
	assert.Equal(t, 2*plainSize(mustItem(u, 14, "z.jpg").Size), sum.TotalBytes)
	assert.Equal(t, 1, sum.Unchanged, "the one the run did not touch")
	assert.Equal(t, 1, sum.LeftOut)
}

func TestFatalAndDiskErrorsSayWhatStopsARun(t *testing.T) {
	ctx := context.Background()
	full := &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	err := diskError("DIR", full)
	var de *DirError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "DIR", de.Dir)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Same(t, err, diskError("DIR", err), "said once")
	assert.ErrorAs(t, diskError("DIR", syscall.EROFS), &de)
	other := errors.New("other")
	assert.Same(t, other, diskError("DIR", other))
	assert.True(t, fatal(ctx, err))
	assert.True(t, fatal(ctx, fmt.Errorf("x: %w", errs.ErrNotLoggedIn)))
	assert.True(t, fatal(ctx, &UnreachableError{Err: other}))
	assert.False(t, fatal(ctx, other))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.True(t, fatal(cancelled, other))
	assert.True(t, isDirError(err))
	assert.False(t, isDirError(other))
}
