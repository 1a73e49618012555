package backup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
)

// A nightly cron backs up one album (--albums B). A photo in albums A and
// B is deleted by hand from B: the next filtered run restores B's copy (B
// is in the run), counted as restored, not failed, rather than leaving the
// file marked failed, unseen and never restored while the cron keeps its
// filter. The night after has nothing left to do.
func TestALocalLossInAnAlbumOfAFilteredRunIsRestored(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	b.Add(f)
	e.mustRun()
	require.NoError(t, os.Remove(filepath.Join(e.dir, "B", "x.jpg")))
	only := filter.Set{Albums: filter.Albums{Include: []string{"B"}}}
	before := e.downloads()

	sum := e.runWith(only)
	assert.Equal(t, 1, sum.LocalRestored)
	assert.Zero(t, sum.Failed)
	assert.Zero(t, sum.New)
	assert.Empty(t, e.kinds(FileFailed))
	assert.Zero(t, e.failedRecords())
	if restored := e.kinds(LocalRestored); assert.Len(t, restored, 1) {
		assert.Equal(t, filepath.Join("B", "x.jpg"), restored[0].Path)
	}
	e.same("B/x.jpg", f.Plaintext())
	e.same("A/x.jpg", f.Plaintext())
	assert.Equal(t, before+1, e.downloads(), "one download, by the filtered run")

	sum = e.runWith(only)
	assert.Zero(t, sum.LocalRestored)
	assert.Zero(t, sum.Failed)
	assert.Equal(t, before+1, e.downloads(), "nothing more to download")
}

// The look-up of a locally deleted file's entry cannot connect once, while
// the server answers everything else: a blip, not an outage. The file is a
// failure of this run, by name, the rest is backed up, and the next run
// restores it.
func TestALocalLossWhoseLookUpCannotConnectFailsAndIsRestoredNextRun(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	e.mustRun()
	require.NoError(t, os.Remove(filepath.Join(e.dir, "Trip", "00.jpg")))
	later := e.u.AddAlbum("Later").AddFile(enteapitest.FileSpec{Title: "later.jpg", Size: 10, Seed: 42})
	e.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		return enteapitest.LoseResponse(), strings.HasPrefix(route, "GET /collections/file")
	})
	o := e.options()
	o.Policy.MaxAttempts = 1
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Failed)
	require.Len(t, e.kinds(FileFailed), 1)
	assert.Equal(t, fs[0].ID, e.kinds(FileFailed)[0].FileID)
	e.same("Later/later.jpg", later.Plaintext())
	e.s.SetChaos(nil)
	sum = e.mustRun()
	assert.Equal(t, 1, sum.LocalRestored)
	e.same("Trip/00.jpg", fs[0].Plaintext())
}

// The reverse: a photo in albums A and B is deleted by hand from A, and
// the nightly run leaves A out (by name, or as hidden or archived). That
// run leaves A alone (nothing failed, nothing to report), and the next run
// that takes A restores its copy, as a restore, not as a new file.
func TestALocalLossInAnAlbumAFilteredRunLeavesOutWaitsForARunThatTakesIt(t *testing.T) {
	for _, c := range []struct {
		name       string
		visibility int
		later      bool // hidden or archived after a run recorded it as visible
		f          filter.Set
	}{
		{"albums", 0, false, filter.Set{Albums: filter.Albums{Include: []string{"B"}}}},
		{"exclude-albums", 0, false, filter.Set{Albums: filter.Albums{Exclude: []string{"A"}}}},
		{"no-hidden", 2, false, filter.Set{NoHidden: true}},
		{"no-hidden, hidden later", 2, true, filter.Set{NoHidden: true}},
		{"no-archived, archived later", 1, true, filter.Set{NoArchived: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
			f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
			b.Add(f)
			if c.later {
				e.mustRun()
			}
			a.SetVisibility(c.visibility)
			e.mustRun()
			require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "x.jpg")))
			before := e.downloads()

			sum := e.runWith(c.f)
			assert.Zero(t, sum.Failed)
			assert.Empty(t, e.kinds(FileFailed))
			assert.Zero(t, e.failedRecords())
			assert.Zero(t, sum.LocalRestored)
			e.same("B/x.jpg", f.Plaintext())

			sum = e.mustRun()
			assert.Zero(t, sum.Failed)
			assert.Zero(t, sum.New)
			assert.Equal(t, 1, sum.LocalRestored)
			e.same("A/x.jpg", f.Plaintext())
			e.same("B/x.jpg", f.Plaintext())
			assert.Equal(t, before, e.downloads()-1, "one download, by the run that takes A")
		})
	}
}
