package backup

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// fewPages lowers the listing's cap for a test.
func fewPages(t *testing.T, n int) {
	t.Helper()
	was := maxListingPages
	maxListingPages = n
	t.Cleanup(func() { maxListingPages = was })
}

// An album whose listing never ends (each page the same files at later
// times) fails on its own after the cap; the other albums are saved and
// the run ends.
func TestAnEndlessListingFailsItsAlbumAndTheRunEnds(t *testing.T) {
	fewPages(t, 50)
	e := newEnvWith(t, enteapitest.Config{PageSize: 2})
	good := e.u.AddAlbum("Good").AddFile(enteapitest.FileSpec{Title: "g.jpg", Size: 10, Seed: 1})
	bad := e.u.AddAlbum("Bad")
	bad.AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10, Seed: 2})
	bad.Endless()
	o := e.options()
	o.FreeSpace = func(string) (int64, error) { return 1 << 40, nil } // the space check lists it too
	sum, err := Run(t.Context(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.AlbumsFailed)
	e.same("Good/g.jpg", good.Plaintext())
	assert.LessOrEqual(t, e.s.Requests("GET /collections/v2/diff"), 2*50+4, "listed up to the cap, by the space check and the sync, then stopped")
	failed := e.kinds(AlbumFailed)
	require.Len(t, failed, 1)
	assert.ErrorIs(t, failed[0].Err, errEndless)
}

// A link's whole listing, read to find a file missing on disk, stops at
// the cap too.
func TestAnEndlessLinkListingStops(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	link := a.ShareLink(enteapitest.LinkOptions{})
	_, err := e.runLink(link, false)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "x.jpg")))
	fewPages(t, 20)
	a.Endless()
	sum, err := e.runLink(link, false)
	require.NoError(t, err, "the run goes on")
	require.Len(t, sum.Failures, 1, "the file missing on disk")
	assert.Contains(t, sum.Failures[0].Error, "did not end")
	lib := e.linkOptions(link).Library.(*LinkLibrary)
	_, err = lib.listAll(t.Context())
	assert.ErrorIs(t, err, errEndless)
}

// A listing of exactly the cap's pages is read whole, an account's and a
// link's alike: the cap stops a listing past it, not at it.
func TestAListingOfExactlyTheCapsPagesEnds(t *testing.T) {
	fewPages(t, 3)
	e := newEnvWith(t, enteapitest.Config{PageSize: 2})
	a := e.u.AddAlbum("A")
	for i := range 5 { // pages of 2, 2 and 1
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i + 1)})
	}
	assert.Equal(t, "50 B", e.needs(e.options()), "the space check counts every page")
	sum := e.mustRun()
	assert.Equal(t, 5, sum.New)
	assert.Zero(t, sum.AlbumsFailed)

	link := a.ShareLink(enteapitest.LinkOptions{})
	files, err := e.linkOptions(link).Library.(*LinkLibrary).listAll(t.Context())
	require.NoError(t, err)
	assert.Len(t, files, 5)
}

// A listing that says there is more without going on is an error: an
// account's album fails on its own, and the next run saves it.
func TestAListingThatDoesNotGoOnFailsItsAlbum(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	e.s.Inject("GET /collections/v2/diff", stuckPage)
	sum, err := e.run()
	require.NoError(t, err)
	assert.Equal(t, 1, sum.AlbumsFailed)
	failed := e.kinds(AlbumFailed)
	require.Len(t, failed, 1)
	assert.ErrorIs(t, failed[0].Err, errStuck)
	e.mustRun()
	e.same("A/a.jpg", f.Plaintext())
}

// stuckPage is a listing page that says there is more and holds nothing.
var stuckPage = enteapitest.StatusBody(200, `{"diff":[],"hasMore":true}`)

// A link backup reads the album's whole listing to find the files missing
// on disk. When that listing does not go on, each missing file is a
// failure naming it (read once a run, not once a file), the run saves what
// is new, and the next run downloads the missing files again.
func TestALinksWholeListingThatDoesNotGoOnFailsItsMissingFiles(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Grandma")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	link := a.ShareLink(enteapitest.LinkOptions{})
	_, err := e.runLink(link, false)
	require.NoError(t, err)
	for _, name := range []string{"x.jpg", "y.jpg"} {
		require.NoError(t, os.Remove(filepath.Join(e.dir, "Grandma", name)))
	}
	added := a.AddFile(enteapitest.FileSpec{Title: "new.jpg", Size: 10, Seed: 3})
	before := e.s.Requests("GET /public-collection/diff")

	e.s.Inject("GET /public-collection/diff", stuckPage)
	o := e.linkOptions(link)
	lib := o.Library.(*LinkLibrary)
	sum, err := Run(t.Context(), o)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Failed)
	for _, f := range sum.Failures {
		assert.Equal(t, "Grandma", f.Album)
		assert.Contains(t, f.Error, "does not go on")
	}
	e.same("Grandma/new.jpg", added.Plaintext())
	assert.ErrorIs(t, lib.broken, errStuck)
	assert.Equal(t, before+2, e.s.Requests("GET /public-collection/diff"), "the whole listing once, then the album's new entries")

	_, err = e.runLink(link, false)
	require.NoError(t, err)
	e.same("Grandma/x.jpg", x.Plaintext())
	e.same("Grandma/y.jpg", y.Plaintext())
}

// A link's whole listing keeps each file's latest entry: a file listed,
// then listed again as deleted further on (deleted while the listing was
// read), is not listed.
func TestALinksWholeListingKeepsEachFilesLatestEntry(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	lib := e.linkOptions(a.ShareLink(enteapitest.LinkOptions{})).Library.(*LinkLibrary)
	page := `{"diff":[{"id":%d,"collectionID":%d,"updationTime":%d,"isDeleted":%t}],"hasMore":%t}`
	e.s.Inject("GET /public-collection/diff",
		enteapitest.StatusBody(200, fmt.Sprintf(page, f.ID, a.ID, 10, false, true)),
		enteapitest.StatusBody(200, fmt.Sprintf(page, f.ID, a.ID, 20, true, false)))
	_, err := lib.CollectionFile(t.Context(), a.ID, f.ID)
	assert.ErrorIs(t, err, ErrNotListed)
}
