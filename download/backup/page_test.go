package backup

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/state"
)

// pager wires a pager over the bench, downloading with save, workers at
// once.
func (u *unit) pager(save saveFunc, workers int) *pager {
	update := u.updater()
	return &pager{st: u.st, shown: u.dir, seen: newProof(), names: u.parts, expected: u.exp, adopt: u.adopter(),
		update: update, refresh: &refresher{update: update, albums: u.albums, disk: u.disk, views: u.views, tally: u.tally},
		save: save, workers: workers, tally: u.tally}
}

// saves records what a pager asks to download, and answers with a saved
// record, or with err for the titles in fail.
type saves struct {
	mu    sync.Mutex
	named map[int64][]string
	order []int64
	fail  map[int64]error
}

func (s *saves) save(_ context.Context, it *catalog.Item, sf *state.File, _ *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.named == nil {
		s.named = map[int64][]string{}
	}
	s.named[it.FileID], s.order = named, append(s.order, it.FileID)
	if err := s.fail[it.FileID]; err != nil {
		return nil, err
	}
	rec := record(it, sf)
	placed(rec, it, it.Meta.Hash, false)
	rec.Entries[c.ID] = &state.Entry{Name: named[0], Parts: named, Meta: it.Meta}
	return rec, nil
}

func TestPagerNamesNewFilesInThePagesOrderAndDownloadsThem(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	r1, _ := u.file(a, 11, "x.jpg", []byte("one"), 10)
	r2, _ := u.file(a, 12, "x.jpg", []byte("two"), 20)
	s := &saves{}
	files, complete, err := u.pager(s.save, 4).apply(context.Background(), a, c, []apiclient.File{*r1, *r2})
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Equal(t, map[int64][]string{11: {"x.jpg"}, 12: {"x_1.jpg"}}, s.named, "the first listed takes the plain name")
	require.Len(t, files, 2)
	for _, f := range files {
		want := map[int64]int64{11: 10, 12: 20}[f.ID]
		assert.Equal(t, want, f.Entries[c.ID].Updated, "each record reflects its entry's time")
	}
	planned := u.kinds(Planned)
	require.Len(t, planned, 1)
	assert.Equal(t, 2, planned[0].Files)
	assert.Equal(t, int64(len("one")+len("two")), planned[0].Bytes)
	assert.Equal(t, hashOf([]byte("two")), u.exp.hash(12), "the hash of a file in flight is expected")
}

func TestPagerRunsAtMostItsWorkersAtOnce(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	var entries []apiclient.File
	for i := range 20 {
		r, _ := u.file(a, int64(100+i), "f.jpg", []byte{byte(i)}, int64(i+1))
		entries = append(entries, *r)
	}
	var inflight, most atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	s := &saves{}
	save := func(ctx context.Context, it *catalog.Item, sf *state.File, a *catalog.Album, c *state.Collection, named []string) (*state.File, error) {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		started <- struct{}{}
		<-release
		inflight.Add(-1)
		return s.save(ctx, it, sf, a, c, named)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := u.pager(save, 2).apply(context.Background(), a, c, entries)
		done <- err
	}()
	deadline := time.After(10 * time.Second)
	wait := func() {
		select {
		case <-started:
		case <-deadline:
			t.Fatal("a download never started")
		}
	}
	wait() // two start before any ends...
	for range len(entries) - 1 {
		wait()
		release <- struct{}{} // ...and each that ends lets one more start
	}
	release <- struct{}{}
	require.NoError(t, <-done)
	assert.Equal(t, int32(2), most.Load(), "two at once, never more")
	assert.Len(t, s.order, 20)
}

func TestPagerStopsAtAnErrorThatStopsTheRunAndReturnsIt(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	var entries []apiclient.File
	for i := range 5 {
		r, _ := u.file(a, int64(10+i), "f.jpg", []byte{byte(i)}, int64(i+1))
		entries = append(entries, *r)
	}
	full := &DirError{Dir: u.dir, Reason: "is full"}
	s := &saves{fail: map[int64]error{10: full}}
	files, complete, err := u.pager(s.save, 1).apply(context.Background(), a, c, entries)
	assert.ErrorIs(t, err, full)
	assert.False(t, complete)
	assert.Empty(t, files)
	assert.Equal(t, []int64{10}, s.order, "nothing else is started once the run must stop")
}

func TestPagerMarksADeletionAndKeepsTheCopy(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	_, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	u.saved(c, it, "x.jpg", []byte("x"))
	pg := u.pager((&saves{}).save, 1)
	files, _, err := pg.apply(context.Background(), a, c, []apiclient.File{{ID: 11, CollectionID: 1, IsDeleted: true, UpdationTime: 30}})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.True(t, files[0].Entries[c.ID].Deleted)
	assert.Equal(t, int64(30), files[0].Entries[c.ID].Updated)
	assert.True(t, pg.seen.goneNow[entryKey{11, 1}], "the listing proves it gone")
	assert.Equal(t, "x", u.read("A/x.jpg"), "an archive keeps its copy")
	assert.Equal(t, 1, u.tally.summary().DeletedOnServer)
	require.Len(t, u.kinds(DeletedOnServer), 1)
	assert.Equal(t, "A/x.jpg", u.kinds(DeletedOnServer)[0].Path)

	// The same entry again in this run is not applied twice; a deletion of
	// a file never saved asks for nothing.
	files, _, err = pg.apply(context.Background(), a, c, []apiclient.File{{ID: 11, CollectionID: 1, IsDeleted: true, UpdationTime: 30}})
	require.NoError(t, err)
	assert.Empty(t, files)
	files, _, err = pg.apply(context.Background(), a, c, []apiclient.File{{ID: 99, CollectionID: 1, IsDeleted: true, UpdationTime: 31}})
	require.NoError(t, err)
	assert.Empty(t, files)
}

func TestPagerSkipsWhatTheFiltersLeaveOutAndKeepsItsEntry(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	r, _ := u.file(a, 11, "x.jpg", []byte("x"), 10)
	s := &saves{}
	pg := u.pager(s.save, 1)
	pg.filter = filter.Set{Since: time.Unix(2_000_000_000, 0)} // only files from 2033 on
	files, _, err := pg.apply(context.Background(), a, c, []apiclient.File{*r})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, state.Skipped, files[0].Status)
	require.NotNil(t, files[0].Pending, "the entry is kept for a wider run")
	assert.Equal(t, int64(11), files[0].Pending.ID)
	assert.Empty(t, s.order)
	assert.Len(t, u.kinds(FileSkipped), 1)
	assert.Equal(t, 1, u.tally.summary().Skipped)
}

func TestPagerFailsAnEntryThatDoesNotOpen(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	r, _ := u.file(a, 11, "x.jpg", []byte("x"), 10)
	bad := *r
	bad.EncryptedKey = append([]byte{}, r.EncryptedKey...)
	bad.EncryptedKey[0] ^= 1
	files, complete, err := u.pager((&saves{}).save, 1).apply(context.Background(), a, c, []apiclient.File{bad})
	require.NoError(t, err)
	assert.True(t, complete, "a failed file is recorded, not a stop")
	require.Len(t, files, 1)
	assert.Equal(t, state.Failed, files[0].Status)
	assert.Len(t, u.kinds(FileFailed), 1)
	assert.Equal(t, 1, u.tally.summary().Failed)
}

func TestPagerLeavesAnUnchangedFileAndAppliesOnlyAFilesLatestEntry(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	r, it := u.file(a, 11, "x.jpg", []byte("x"), 10)
	u.saved(c, it, "x.jpg", []byte("x"))
	s := &saves{}
	pg := u.pager(s.save, 1)
	files, _, err := pg.apply(context.Background(), a, c, []apiclient.File{*r})
	require.NoError(t, err)
	assert.Empty(t, files, "nothing changed")

	// A newer deletion listed before an older live entry of the same file:
	// the older one is not applied after it.
	older := *r
	older.UpdationTime = 5
	files, _, err = pg.apply(context.Background(), a, c, []apiclient.File{{ID: 11, CollectionID: 1, IsDeleted: true, UpdationTime: 40}, older})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.True(t, files[0].Entries[c.ID].Deleted)
	assert.Empty(t, s.order)
}

func TestPagerInAMetadataOnlyRunDownloadsNothing(t *testing.T) {
	u := newUnit(t)
	a, c := u.album(1, "A")
	r, _ := u.file(a, 11, "x.jpg", []byte("x"), 10)
	s := &saves{}
	pg := u.pager(s.save, 1)
	pg.metadataOnly = true
	files, _, err := pg.apply(context.Background(), a, c, []apiclient.File{*r})
	require.NoError(t, err)
	assert.Empty(t, files)
	assert.Empty(t, s.order, "media waits for a full run")
}

func TestPagerStopsOnADiskErrorOfAnUpdate(t *testing.T) {
	u := newUnit(t)
	full := &DirError{Dir: u.dir, Reason: "is full"}
	pg := u.pager((&saves{}).save, 1)
	w := &pageWork{prev: map[int64]*state.File{}}
	a := &catalog.Album{ID: 1, Name: "A"}
	raw := &apiclient.File{ID: 5, CollectionID: 1}
	it := &catalog.Item{FileID: 5, Meta: catalog.Meta{Title: "t"}}
	assert.ErrorIs(t, pg.settle(context.Background(), nil, full, nil, raw, a, it, w), full)
	assert.Empty(t, w.out)
	require.NoError(t, pg.settle(context.Background(), nil, errors.New("one file's"), nil, raw, a, it, w))
	require.Len(t, w.out, 1)
	assert.Equal(t, state.Failed, w.out[0].Status)
}
