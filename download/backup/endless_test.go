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
	sum, err := e.run()
	require.NoError(t, err)
	assert.Equal(t, 1, sum.AlbumsFailed)
	e.same("Good/g.jpg", good.Plaintext())
	assert.LessOrEqual(t, e.s.Requests("GET /collections/v2/diff"), 2*50+4, "listed up to the cap, then stopped")
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
	_, _ = e.runLink(link, false)
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
// account's album fails on its own (the next run saves it), and a link's
// whole listing is neither read for ever nor taken for the whole album.
func TestAListingThatDoesNotAdvanceFails(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	stuck := enteapitest.StatusBody(200, `{"diff":[],"hasMore":true}`)
	e.s.Inject("GET /collections/v2/diff", stuck)
	sum, err := e.run()
	require.NoError(t, err)
	assert.Equal(t, 1, sum.AlbumsFailed)
	failed := e.kinds(AlbumFailed)
	require.Len(t, failed, 1)
	assert.ErrorContains(t, failed[0].Err, "does not advance")
	e.mustRun()
	e.same("A/a.jpg", f.Plaintext())

	lib := e.linkOptions(a.ShareLink(enteapitest.LinkOptions{})).Library.(*LinkLibrary)
	e.s.Inject("GET /public-collection/diff", stuck)
	_, err = lib.CollectionFile(t.Context(), a.ID, f.ID)
	assert.ErrorContains(t, err, "does not advance")
	got, err := lib.CollectionFile(t.Context(), a.ID, f.ID) // listed again, whole
	require.NoError(t, err)
	assert.Equal(t, f.ID, got.ID)
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
