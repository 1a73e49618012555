package backup

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
)

// A deletion an earlier run saw is proven only by the server's 404 for
// the entry: a 403 or a 500 (after its retries) proves nothing, so the
// copy stays, named in a prune-kept event.
func TestOnlyANotFoundProvesAnEarlierDeletion(t *testing.T) {
	for name, fault := range map[string]enteapitest.Fault{"403": enteapitest.Status(403), "500": enteapitest.Status(500)} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			a := e.u.AddAlbum("A")
			a.AddFile(enteapitest.FileSpec{Title: "keep.jpg", Size: 10, Seed: 1})
			x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 2})
			e.mustRun()
			x.Trash()
			e.mustRun() // marks it deleted, without --prune
			e.s.Inject("GET /collections/file", enteapitest.Repeat(fault, 8)...)
			sum, err := e.prune(100)
			require.NoError(t, err)
			assert.Zero(t, sum.Pruned)
			assert.True(t, e.exists("A/x.jpg"), "not proven deleted: kept")
			kept := e.kinds(PruneKept)
			require.Len(t, kept, 1)
			assert.Contains(t, kept[0].Err.Error(), "could not be confirmed")

			e.s.ClearFaults("GET /collections/file")
			sum, err = e.prune(100)
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Pruned, "the server's 404 proves it")
		})
	}
}

// --prune never runs after a run in which a file failed, as after one in
// which an album could not be listed.
func TestPruneRefusesAfterAFailedFile(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	x.Trash()
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 10, Seed: 2})
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, bad.ID), enteapitest.Repeat(enteapitest.Status(500), 8)...)
	sum, err := e.prune(100)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Failed)
	assert.Contains(t, sum.PruneRefused, "this run had errors")
	assert.True(t, e.exists("A/x.jpg"))
}

// The date view never links to a copy that still holds older content:
// here the copy in the album of the lowest id, which it would take first,
// could not be refreshed, so it links to the other album's new copy.
func TestTheDateViewSkipsAStaleCopy(t *testing.T) {
	e := newEnv(t)
	e.views = Views{DateView: "YYYY/MM", Zone: est}
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	b.Add(x)
	e.mustRun()
	e.blockWithFolder(filepath.Join("A", "x.jpg"))
	x.Reupload([]byte("version two"))
	o := e.options()
	o.Filter = filter.Set{Albums: filter.Albums{Include: []string{"B"}}} // downloaded into B; A's copy goes stale
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Failed, "A's copy could not be refreshed")
	e.same("B/x.jpg", []byte("version two"))
	e.same("By date/2024/06/x.jpg", []byte("version two"))
}
