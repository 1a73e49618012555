package backup

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
)

// linkOptions are e's options for a backup of link instead of e's account.
func (e *env) linkOptions(link *enteapitest.Link) Options {
	e.t.Helper()
	l, err := publink.Parse(link.URL())
	require.NoError(e.t, err)
	c, err := apiclient.NewLinkClient(e.s.URL(), &http.Client{}, "quak/test", l.AccessToken)
	require.NoError(e.t, err)
	info, err := c.Info(context.Background())
	require.NoError(e.t, err)
	o := e.options()
	o.Source = Source{Library: &LinkLibrary{LinkClient: c, Info: info, Key: l.Key}, Endpoint: e.s.URL(), Link: info.Collection.ID}
	return o
}

func (e *env) runLink(link *enteapitest.Link, prune bool) (*Summary, error) {
	e.t.Helper()
	o := e.linkOptions(link)
	o.Prune = prune
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	return Run(context.Background(), o)
}

func TestLinkBackupIsIncrementalAndPrunesOnlyWhatItsListingShows(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Grandma")
	keep := a.AddFile(enteapitest.FileSpec{Title: "keep.jpg", Size: 10, Seed: 1})
	gone := a.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Size: 10, Seed: 2})
	e.u.AddAlbum("Private").AddFile(enteapitest.FileSpec{Title: "private.jpg", Size: 10, Seed: 3})
	link := a.ShareLink(enteapitest.LinkOptions{})

	sum, err := e.runLink(link, false)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.New)
	e.same("Grandma/keep.jpg", keep.Plaintext())
	e.same("Grandma/gone.jpg", gone.Plaintext())
	assert.False(t, e.exists("Private"), "only the link's album")

	added := a.AddFile(enteapitest.FileSpec{Title: "added.jpg", Size: 10, Seed: 4})
	a.Remove(gone)
	sum, err = e.runLink(link, false)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New, "only the new file")
	e.same("Grandma/added.jpg", added.Plaintext())
	assert.True(t, e.exists("Grandma/gone.jpg"), "kept without --prune")

	// The deletion was seen by a run without --prune: a link cannot ask
	// of one file, so nothing proves it now and the copy stays.
	sum, err = e.runLink(link, true)
	require.NoError(t, err)
	assert.Zero(t, sum.Pruned)
	assert.True(t, e.exists("Grandma/gone.jpg"))
	assert.Len(t, e.kinds(PruneKept), 1)

	a.Remove(keep)
	sum, err = e.runLink(link, true)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned, "a deletion this run's listing shows is proof")
	assert.True(t, e.exists(filepath.Join(trashToday, "Grandma/keep.jpg")))
}

func TestLinkThatStopsWorkingNeverPrunes(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	link := a.ShareLink(enteapitest.LinkOptions{})
	_, err := e.runLink(link, false)
	require.NoError(t, err)

	f.Trash()
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	o := e.linkOptions(link) // /info answered; then the link is turned off
	o.Prune = true
	link.Disable()
	_, err = Run(context.Background(), o)
	assert.ErrorIs(t, err, apiclient.ErrLinkDisabled)
	e.same("A/x.jpg", f.Plaintext())
	assert.Empty(t, e.kinds(FilePruned))
}

func TestLinkDownloadsAgainAFileMissingOnDiskFromItsListing(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	g := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	link := a.ShareLink(enteapitest.LinkOptions{})
	_, err := e.runLink(link, false)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "x.jpg")))
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "y.jpg")))
	a.Remove(g)

	sum, err := e.runLink(link, true)
	require.NoError(t, err)
	e.same("A/x.jpg", f.Plaintext())
	assert.Zero(t, sum.Failed, "a file the link no longer lists is not a failure")
	assert.False(t, e.exists("A/y.jpg"))
}

func TestLinkFolderIsNoAccountsAndNoOtherLinks(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	_, err := e.runLink(a.ShareLink(enteapitest.LinkOptions{}), false)
	require.NoError(t, err)

	var de *DirError
	_, err = e.runLink(b.ShareLink(enteapitest.LinkOptions{}), false)
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "another album")
	_, err = e.run()
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "public link")

	// A new link to the same album is the same backup.
	a.ShareLink(enteapitest.LinkOptions{}).Disable()
	_, err = e.runLink(a.ShareLink(enteapitest.LinkOptions{}), false)
	require.NoError(t, err)

	e2 := newEnv(t)
	e2.mustRun()
	_, err = e2.runLink(e2.u.AddAlbum("C").ShareLink(enteapitest.LinkOptions{}), false)
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "not of a public link")
}

func TestLinkStartedHookRunsOnlyForItsOwnFolder(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	o := e.linkOptions(a.ShareLink(enteapitest.LinkOptions{}))
	calls := 0
	o.Started = func() error { calls++; return nil }
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, calls)

	o = e.linkOptions(e.u.AddAlbum("B").ShareLink(enteapitest.LinkOptions{}))
	o.Started = func() error { calls++; return nil }
	_, err = Run(context.Background(), o)
	require.Error(t, err)
	assert.Equal(t, 1, calls, "never for a folder that is another's")
}
