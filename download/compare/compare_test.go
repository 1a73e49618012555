package compare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
)

// library is a server's listing held in maps: each album's pages, by the
// sinceTime they answer.
type library struct {
	albums []apiclient.Collection
	pages  map[int64]map[int64]*apiclient.DiffPage
	asked  int
	open   error
}

func (l *library) Collections(context.Context, int64) ([]apiclient.Collection, error) {
	return l.albums, nil
}

func (l *library) OpenAlbum(c *apiclient.Collection) (*catalog.Album, error) {
	if l.open != nil {
		return nil, l.open
	}
	return &catalog.Album{ID: c.ID, Name: c.Name}, nil
}

func (l *library) Diff(_ context.Context, album, since int64) (*apiclient.DiffPage, error) {
	l.asked++
	if p := l.pages[album][since]; p != nil {
		return p, nil
	}
	return &apiclient.DiffPage{}, nil
}

func entry(id, at int64, deleted bool) apiclient.File {
	return apiclient.File{ID: id, UpdationTime: at, IsDeleted: deleted}
}

// backedUp is a backup folder whose album 1 ("A", folder "A") holds the
// files given, saved, each as NAME.jpg on disk; the album was listed up to
// cursor.
func backedUp(t *testing.T, cursor int64, ids ...int64) string {
	t.Helper()
	dir := t.TempDir()
	f, err := folder.Prepare(dir, folder.Use{})
	require.NoError(t, err)
	st, err := f.OpenState()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "A"), 0o755))
	var files []*state.File
	for _, id := range ids {
		name := string(rune('a'+id)) + ".jpg"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "A", name), []byte("x"), 0o644))
		files = append(files, &state.File{ID: id, Status: state.Saved,
			Entries: map[int64]*state.Entry{1: {Name: name, Parts: []string{name}}}})
	}
	require.NoError(t, st.Commit(files, &state.Collection{ID: 1, Name: "A", Folder: "A", Cursor: cursor}))
	require.NoError(t, st.Close())
	return dir
}

func run(t *testing.T, dir string, l *library) (*Report, error) {
	t.Helper()
	p := retry.Default()
	p.MaxAttempts = 1
	return Run(context.Background(), Options{Dir: dir, Library: l, Policy: p})
}

// A listing of several pages counts each file once, by its latest entry:
// one deleted and listed again is live, one listed then deleted is not.
func TestAListingOfSeveralPagesCountsEachFileByItsLatestEntry(t *testing.T) {
	old := ListOverlap.Microseconds() * 10
	dir := backedUp(t, old, 1, 2)
	l := &library{albums: []apiclient.Collection{{ID: 1, Name: "A"}, {ID: 9, Name: "Gone", IsDeleted: true}},
		pages: map[int64]map[int64]*apiclient.DiffPage{1: {
			0:  {Diff: []apiclient.File{entry(1, 10, false), entry(3, 11, false), entry(2, 12, true)}, HasMore: true},
			12: {Diff: []apiclient.File{entry(2, 13, false), entry(3, 14, true)}},
		}}}
	r, err := run(t, dir, l)
	require.NoError(t, err)
	assert.Equal(t, 2, l.asked, "two pages, and nothing of a deleted album")
	assert.Equal(t, []Album{{ID: 1, Name: "A", Server: 2, Backup: 2}}, r.Albums)
	assert.Equal(t, 2, r.ServerFiles)
	assert.Equal(t, 2, r.BackupFiles)
	assert.Empty(t, r.Missing)
	assert.Equal(t, 0, r.Lacking())
}

// A listing that says there is more without going on is an error, never a part taken for the whole.
func TestABrokenListingIsAnError(t *testing.T) {
	dir := backedUp(t, 0)
	stuck := &library{albums: []apiclient.Collection{{ID: 1, Name: "A"}}, pages: map[int64]map[int64]*apiclient.DiffPage{1: {
		0: {Diff: []apiclient.File{entry(1, 5, false)}, HasMore: true},
		5: {Diff: []apiclient.File{entry(1, 5, false)}, HasMore: true},
	}}}
	_, err := run(t, dir, stuck)
	assert.ErrorIs(t, err, errBroken)
	assert.Equal(t, 2, stuck.asked, "stopped at the page that did not go on")
}

// Albums sort by name, then id; files by album, title, then id, so what
// status prints is the same from one run to the next.
func TestAReportIsSorted(t *testing.T) {
	c := &comparison{report: &Report{
		Albums:  []Album{{ID: 3, Name: "A"}, {ID: 1, Name: "A"}, {ID: 2, Name: "0"}},
		Missing: []File{{ID: 1, Album: "B", Title: "a"}, {ID: 2, Album: "A", Title: "b"}, {ID: 9, Album: "A", Title: "a"}, {ID: 3, Album: "A", Title: "a"}},
	}}
	c.sort()
	assert.Equal(t, []Album{{ID: 2, Name: "0"}, {ID: 1, Name: "A"}, {ID: 3, Name: "A"}}, c.report.Albums)
	assert.Equal(t, []File{{ID: 3, Album: "A", Title: "a"}, {ID: 9, Album: "A", Title: "a"}, {ID: 2, Album: "A", Title: "b"}, {ID: 1, Album: "B", Title: "a"}},
		c.report.Missing)
}

func TestAnEndlessListingStopsAtTheCap(t *testing.T) {
	dir := backedUp(t, 0)
	l := &endless{albums: []apiclient.Collection{{ID: 1, Name: "A"}}}
	p := retry.Default()
	p.MaxAttempts = 1
	_, err := Run(context.Background(), Options{Dir: dir, Library: l, Policy: p})
	assert.ErrorIs(t, err, errBroken)
	assert.Equal(t, maxPages, l.asked)
}

// endless is a listing whose every page goes on and says there is more.
type endless struct {
	albums []apiclient.Collection
	asked  int
}

func (l *endless) Collections(context.Context, int64) ([]apiclient.Collection, error) {
	return l.albums, nil
}
func (l *endless) OpenAlbum(c *apiclient.Collection) (*catalog.Album, error) {
	return &catalog.Album{ID: c.ID, Name: c.Name}, nil
}
func (l *endless) Diff(_ context.Context, _, since int64) (*apiclient.DiffPage, error) {
	l.asked++
	return &apiclient.DiffPage{Diff: []apiclient.File{entry(int64(l.asked), since+1, false)}, HasMore: true}, nil
}

// A copy counts only as a regular file in its album folder: not a link,
// not a folder, not a name that leads out of the backup.
func TestACopyCountsOnlyAsAFileInItsFolder(t *testing.T) {
	dir := backedUp(t, ListOverlap.Microseconds()*10, 1, 2, 3)
	b := filepath.Join(dir, "A", "c.jpg")
	require.NoError(t, os.Remove(b))
	require.NoError(t, os.Symlink(filepath.Join(dir, "A", "b.jpg"), b))
	d := filepath.Join(dir, "A", "d.jpg")
	require.NoError(t, os.Remove(d))
	require.NoError(t, os.Mkdir(d, 0o755))
	l := &library{albums: []apiclient.Collection{{ID: 1, Name: "A"}}, pages: map[int64]map[int64]*apiclient.DiffPage{1: {
		0: {Diff: []apiclient.File{entry(1, 1, false), entry(2, 2, false), entry(3, 3, false)}},
	}}}
	r, err := run(t, dir, l)
	require.NoError(t, err)
	assert.Equal(t, 1, r.BackupFiles)
	require.Len(t, r.Missing, 2)
	for _, m := range r.Missing {
		assert.Equal(t, WhyGone, m.Why)
	}
	assert.Equal(t, 2, r.Lacking())

	assert.False(t, partsOnDisk(dir, "A", []string{"../../etc/passwd"}))
	assert.False(t, partsOnDisk(dir, "A", nil))
	assert.True(t, partsOnDisk(dir, "A", []string{"b.jpg"}))
}

// A file the listing shows past the album's cursor, less the overlap, is
// new since the last run; an older one the backup lacks is lacking.
func TestNewIsPastTheCursorLessTheOverlap(t *testing.T) {
	cursor := ListOverlap.Microseconds() * 10
	dir := backedUp(t, cursor)
	edge := cursor - ListOverlap.Microseconds()
	l := &library{albums: []apiclient.Collection{{ID: 1, Name: "A"}, {ID: 2, Name: "B"}}, pages: map[int64]map[int64]*apiclient.DiffPage{
		1: {0: {Diff: []apiclient.File{entry(1, edge, false), entry(2, edge+1, false)}}},
		2: {0: {Diff: []apiclient.File{entry(3, edge, false), entry(4, edge+1, false)}}},
	}}
	r, err := run(t, dir, l)
	require.NoError(t, err)
	why := map[int64]string{}
	for _, m := range r.Missing {
		why[m.ID] = m.Why
	}
	assert.Equal(t, map[int64]string{1: WhyAbsent, 2: WhyNew, 3: WhyNoAlbum, 4: WhyNew}, why)
	assert.Equal(t, 2, r.Lacking())
}

// An album that does not open ends the comparison: its files cannot be
// counted.
func TestAnAlbumThatDoesNotOpenIsAnError(t *testing.T) {
	dir := backedUp(t, 0)
	boom := errors.New("boom")
	_, err := run(t, dir, &library{albums: []apiclient.Collection{{ID: 1}}, open: boom})
	assert.ErrorIs(t, err, boom)
}

// A file the last run failed is failing, one the filters left out is
// left out, whatever its time; a copy the server no longer lists, and not
// marked deleted, is only here; a copy marked deleted is not; both sides
// come sorted by album, then title, then id.
func TestWhyAFileIsMissingAndWhatIsOnlyHere(t *testing.T) {
	cursor := ListOverlap.Microseconds() * 10
	dir := backedUp(t, cursor, 1, 2, 3)
	f := folder.At(dir)
	st, err := f.OpenState()
	require.NoError(t, err)
	require.NoError(t, st.Commit([]*state.File{
		{ID: 7, Status: state.Failed},
		{ID: 8, Status: state.Skipped},
		{ID: 9, Status: state.Saved, Entries: map[int64]*state.Entry{1: {Name: "gone.jpg", Parts: []string{"gone.jpg"}, Deleted: true}}},
		{ID: 10, Status: state.HashMismatch, Entries: map[int64]*state.Entry{1: {Name: "odd.jpg", Parts: []string{"odd.jpg"}}}},
	}, &state.Collection{ID: 2, Name: "B", Folder: "B", Cursor: cursor}))
	require.NoError(t, st.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "A", "gone.jpg"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "A", "odd.jpg"), []byte("x"), 0o644))
	late := cursor + 1
	l := &library{albums: []apiclient.Collection{{ID: 2, Name: "B"}, {ID: 1, Name: "A"}}, pages: map[int64]map[int64]*apiclient.DiffPage{
		1: {0: {Diff: []apiclient.File{entry(1, 1, false), entry(7, late, false), entry(8, late, false), entry(10, 1, false)}}},
		2: {0: {Diff: []apiclient.File{entry(9, 1, false)}}},
	}}
	r, err := run(t, dir, l)
	require.NoError(t, err)
	assert.Equal(t, []Album{{ID: 1, Name: "A", Server: 4, Backup: 2, OnlyHere: 2}, {ID: 2, Name: "B", Server: 1}}, r.Albums,
		"a file kept though its bytes do not match Ente's hash is in the backup")
	assert.Equal(t, []File{{ID: 7, Album: "A", Why: WhyFailing}, {ID: 8, Album: "A", Why: WhyLeftOut}, {ID: 9, Album: "B", Why: WhyAbsent}}, r.Missing)
	assert.Equal(t, []File{{ID: 2, Album: "A", Title: "c.jpg"}, {ID: 3, Album: "A", Title: "d.jpg"}}, r.OnlyHere)
	assert.Equal(t, 5, r.ServerFiles)
	assert.Equal(t, 2, r.BackupFiles)
	assert.Equal(t, 3, r.Lacking())
}
