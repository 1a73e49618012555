package backup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
)

// A nightly cron backs up one album (--albums B). A photo in albums A and
// B is deleted by hand from B: the next filtered run restores B's copy
// (B is in the run), rather than leaving the file marked failed, unseen
// and never restored while the cron keeps its filter.
func TestALocalLossInAnAlbumOfAFilteredRunIsRestored(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	b.Add(f)
	e.mustRun()
	require.NoError(t, os.Remove(filepath.Join(e.dir, "B", "x.jpg")))
	only := filter.Set{Albums: filter.Albums{Include: []string{"B"}}}
	for night := 1; night <= 2; night++ {
		sum := e.runWith(only)
		t.Logf("night %d: restored %d, failed %d, saved-in-backup %d", night, sum.LocalRestored, sum.Failed, sum.TotalFiles)
	}
	e.same("B/x.jpg", f.Plaintext())
}
