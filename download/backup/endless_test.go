package backup

import (
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
