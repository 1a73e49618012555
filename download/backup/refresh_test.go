package backup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func TestMetadataOnlyRefreshesWithoutDownloading(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "gone-sidecar.jpg", Size: 10, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "edited-sidecar.jpg", Size: 10, Seed: 2})
	touched := a.AddFile(enteapitest.FileSpec{Title: "touched.jpg", Size: 10, Seed: 3, CreationTime: jan2020.UnixMicro()})
	captioned := a.AddFile(enteapitest.FileSpec{Title: "captioned.jpg", Size: 10, Seed: 4})
	renamed := a.AddFile(enteapitest.FileSpec{Title: "before.jpg", Size: 10, Seed: 5})
	e.mustRun()
	meta := func(name string) string { return filepath.Join(e.dir, "A", ".meta", name) }
	want := map[string][]byte{}
	for _, n := range []string{"gone-sidecar.jpg.json", "edited-sidecar.jpg.json", "album_meta.json"} {
		want[n] = e.read(filepath.Join("A", ".meta", n))
	}

	// Local damage, and edits and a new file on the server.
	require.NoError(t, os.Remove(meta("gone-sidecar.jpg.json")))
	require.NoError(t, os.WriteFile(meta("edited-sidecar.jpg.json"), []byte(`{"title":"hand-edited"}`), 0o644))
	require.NoError(t, os.Remove(meta("album_meta.json")))
	require.NoError(t, os.Chtimes(filepath.Join(e.dir, "A", "touched.jpg"), time.Now(), time.Now()))
	captioned.Edit(func(f *enteapitest.FileSpec) { f.Caption = "a caption" })
	renamed.Edit(func(f *enteapitest.FileSpec) { f.EditedName = "after.jpg" })
	newFile := a.AddFile(enteapitest.FileSpec{Title: "new.jpg", Size: 10, Seed: 6})
	downloads := e.downloads()

	o := e.options()
	o.MetadataOnly = true
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, downloads, e.downloads(), "--metadata-only downloaded media")
	assert.Zero(t, sum.New)
	assert.Equal(t, 5, sum.Updated, "two sidecars, one mtime, a caption and a rename")
	for n, b := range want {
		assert.Equal(t, string(b), string(e.read(filepath.Join("A", ".meta", n))), "%s restored", n)
	}
	fi, err := os.Stat(filepath.Join(e.dir, "A", "touched.jpg"))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(micros(touched.Spec().CreationTime)), "mtime restored")
	assert.Contains(t, string(e.read("A/.meta/captioned.jpg.json")), "a caption")
	assert.True(t, e.exists("A/after.jpg"))
	assert.False(t, e.exists("A/new.jpg"), "media are left for a full run")

	sum = e.mustRun()
	assert.Equal(t, 1, sum.New, "the cursor did not move: the next full run fetches the new file")
	e.same("A/new.jpg", newFile.Plaintext())
}
