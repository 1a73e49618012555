package restore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// A file archived or hidden on its own comes back so: sent in its private
// magic metadata at upload, from the backup's state or from its sidecar.
func TestRestoreGivesAFileItsOwnVisibilityBack(t *testing.T) {
	for _, sidecarsOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "state", true: "sidecars"}[sidecarsOnly], func(t *testing.T) {
			e := newEnv(t)
			trip := e.src.AddAlbum("Trip")
			trip.AddFile(enteapitest.FileSpec{Title: "archived.jpg", Data: enteapitest.FakeJPEG("a")}).SetVisibility(1)
			trip.AddFile(enteapitest.FileSpec{Title: "hidden.jpg", Data: enteapitest.FakeJPEG("h")}).SetVisibility(2)
			trip.AddFile(enteapitest.FileSpec{Title: "plain.jpg", Data: enteapitest.FakeJPEG("p")})
			e.backup(e.src, e.dir)
			if sidecarsOnly {
				require.NoError(t, os.RemoveAll(filepath.Join(e.dir, folder.StateDir)))
			}
			sum := e.mustRestore()
			assert.Equal(t, 3, sum.Uploaded)
			again := filepath.Join(t.TempDir(), "again")
			e.backup(e.dst, again)
			got := map[string]int{}
			for _, c := range e.backedUp(again) {
				got[c.Meta.Title] = c.Meta.Visibility
			}
			assert.Equal(t, map[string]int{"archived.jpg": 1, "hidden.jpg": 2, "plain.jpg": 0}, got)
		})
	}
}
