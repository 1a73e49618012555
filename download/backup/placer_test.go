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

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/state"
)

// placer wires a placer over the bench, downloading from its library.
func (u *unit) placer() *placer {
	return &placer{fetcher: fetcherFor(u.lib), tmp: u.f.Temp(), mode: 0o640, shown: u.dir, albums: u.albums, names: u.parts,
		disk: u.disk, views: u.views, relink: u.relinker(), adopt: u.adopter(), resumes: &resumer{st: u.st, tmp: u.f.Temp(),
			points: map[int64]*download.ResumePoint{}}, down: &outage{}, tally: u.tally, restoring: map[int64]bool{}}
}

func (u *unit) relinker() *relinker {
	return &relinker{st: u.st, shown: u.dir, albums: u.albums, disk: u.disk, views: u.views, tally: u.tally, commit: u.commit}
}

func TestPlacerSavesAFileWithItsSidecarUnderItsTitle(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("the bytes"), 10)
	rec, err := u.placer().download(context.Background(), it, nil, a, c, nil)
	require.NoError(t, err)
	assert.Equal(t, "the bytes", u.read("A/x.jpg"))
	fi, err := os.Stat(filepath.Join(u.dir, "A/x.jpg"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the run's file mode")
	assert.Equal(t, micros(it.Meta.CreationTime), fi.ModTime().UTC(), "mtime is the creation time")
	assert.Contains(t, u.read("A/.meta/x.jpg.json"), `"id": 11`, "its sidecar names it")
	assert.Equal(t, state.Saved, rec.Status)
	assert.Equal(t, it.Meta.Hash, rec.LocalHash)
	assert.Equal(t, keys.EncodeB64(it.Header), rec.Header)
	assert.Equal(t, []string{"x.jpg"}, rec.Entries[c.ID].Parts)
	sum := u.tally.summary()
	assert.Equal(t, 1, sum.New)
	assert.Equal(t, int64(len("the bytes")), sum.Bytes)
	saved := u.kinds(FileSaved)
	require.Len(t, saved, 1)
	assert.Equal(t, "A/x.jpg", saved[0].Path)
	assert.Empty(t, u.kinds(LocalRestored))
	assert.Empty(t, u.kinds(HashMismatch))
}

func TestPlacerCountsAFileDownloadedAgainAsRestoredAndAMismatchAsOne(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	it.Meta.Hash = hashOf([]byte("what the metadata claims"))
	p := u.placer()
	p.restoring[11] = true
	rec, err := p.download(context.Background(), it, nil, a, c, nil)
	require.NoError(t, err)
	assert.Equal(t, state.HashMismatch, rec.Status)
	assert.Equal(t, hashOf([]byte("x")), rec.LocalHash, "the hash of what was written")
	sum := u.tally.summary()
	assert.Equal(t, 1, sum.LocalRestored)
	assert.Zero(t, sum.New)
	assert.Equal(t, 1, sum.HashMismatches)
	assert.Len(t, u.kinds(LocalRestored), 1)
	assert.Len(t, u.kinds(HashMismatch), 1)
	assert.Contains(t, u.read("A/.meta/x.jpg.json"), `"hashCheck": "mismatch"`)
}

func TestPlacerRecordsAFailedDownloadAndFreesItsName(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	u.lib.fail["download 11"] = errors.New("the store said no")
	named := u.parts.name(c, nil, 11, "x.jpg", []string{""})
	rec, err := u.placer().download(context.Background(), it, nil, a, c, named)
	require.NoError(t, err, "one file's failure is not the run's")
	assert.Equal(t, state.Failed, rec.Status)
	assert.Contains(t, rec.Error, "the store said no")
	assert.Equal(t, 1, u.tally.summary().Failed)
	assert.Empty(t, u.read("A/x.jpg"))
	assert.Equal(t, []string{"x.jpg"}, u.parts.name(c, nil, 12, "x.jpg", []string{""}), "the name is free again")
}

func TestPlacerStopsTheRunOnAFullDisk(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	p := u.placer()
	p.fetcher.TempFile = func(string) (*os.File, error) {
		return nil, &os.PathError{Op: "open", Path: "tmp", Err: syscall.ENOSPC}
	}
	rec, err := p.download(context.Background(), it, nil, a, c, nil)
	var de *DirError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, u.dir, de.Dir)
	assert.Nil(t, rec)
	assert.Zero(t, u.tally.summary().Failed, "a stopped run fails no file")
}

func TestPlacerStopsTheRunWhenTheServerIsGone(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	u.lib.fail["download 11"] = fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	_, err := u.placer().download(context.Background(), it, nil, a, c, nil)
	var ue *UnreachableError
	assert.ErrorAs(t, err, &ue)
}

func TestPlacerReplacesAnEntryUnderANewTitleAndRefreshesItsOtherCopies(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, cb := u.album(2, "B")
	_, old := u.file(a, 11, "old.jpg", []byte("old"), 10)
	sf := u.saved(c, old, "old.jpg", []byte("old"))
	require.NoError(t, os.MkdirAll(filepath.Join(u.dir, "B"), 0o755))
	require.NoError(t, os.Link(filepath.Join(u.dir, "A/old.jpg"), filepath.Join(u.dir, "B/old.jpg")))
	sf.Entries[cb.ID] = &state.Entry{Name: "old.jpg", Parts: []string{"old.jpg"}, Meta: old.Meta}
	require.NoError(t, u.commit([]*state.File{sf}, nil))

	_, it := u.file(a, 11, "new.jpg", []byte("new content"), 20)
	rec, err := u.placer().download(context.Background(), it, sf, a, c, nil)
	require.NoError(t, err)
	assert.Equal(t, "new content", u.read("A/new.jpg"))
	assert.Empty(t, u.read("A/old.jpg"), "the old part goes")
	assert.Empty(t, u.read("A/.meta/old.jpg.json"), "and its sidecar")
	assert.Equal(t, "new content", u.read("B/old.jpg"), "the copy in B follows the new content")
	assert.True(t, sameFile(filepath.Join(u.dir, "A/new.jpg"), filepath.Join(u.dir, "B/old.jpg")))
	assert.False(t, rec.Entries[cb.ID].Stale)
}

func TestPlacerTakesTheNameOfAFileAKilledRunLeftThere(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	u.write("A/x.jpg", "x") // renamed, never recorded: no sidecar says so
	u.exp.expect(11, it.Meta.Hash)
	assert.Equal(t, []string{"x.jpg"}, u.parts.name(c, nil, 11, "x.jpg", []string{""}), "the same bytes: its own")
	u.write("A/y.jpg", "someone else's")
	u.exp.expect(12, hashOf([]byte("y")))
	assert.Equal(t, []string{"y_1.jpg"}, u.parts.name(c, nil, 12, "y.jpg", []string{""}), "other bytes: another's")
}

func TestPretenderRecordsWhatItWouldPlaceAndWritesNothing(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	dry := newDryDisk()
	p := &pretender{disk: dry, albums: u.albums, names: u.parts, adopt: u.adopter(), tally: u.tally}
	rec, err := p.pretend(context.Background(), it, nil, a, c, nil)
	require.NoError(t, err)
	assert.Equal(t, state.Saved, rec.Status)
	assert.Equal(t, []string{"x.jpg"}, rec.Entries[c.ID].Parts)
	assert.True(t, dry.Exists(filepath.Join(u.dir, "A/x.jpg")), "later decisions see it")
	assert.Empty(t, u.read("A/x.jpg"), "nothing written")
	assert.Equal(t, 1, u.tally.summary().New)
	assert.Equal(t, plainSize(it.Size), u.tally.summary().Bytes)
	assert.Empty(t, u.lib.calls, "nothing fetched")

	it.Meta.FileType = 2 // a live photo is named from its title
	it.Meta.Title = "live.HEIC"
	rec, err = p.pretend(context.Background(), it, nil, a, c, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"live.heic", "live.mov"}, rec.Entries[c.ID].Parts)
}
