package backup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// sidecarFile is what the tests read of a file's sidecar in .meta, as
// docs/backup.md documents it.
type sidecarFile struct {
	Title        string  `json:"title"`
	Description  *string `json:"description"`
	CreationTime string  `json:"creationTime"`
	Info         struct {
		ID        int64    `json:"id"`
		Hash      *string  `json:"hash"`
		FileNames []string `json:"fileNames"`
	} `json:"info"`
	Quak struct {
		HashCheck string `json:"hashCheck"`
	} `json:"quak"`
}

// albumMetaFile is what the tests read of an album_meta.json.
type albumMetaFile struct {
	ID         int64  `json:"id"`
	AlbumName  string `json:"albumName"`
	Visibility string `json:"visibility"`
}

func (e *env) albumMeta(folderName string) albumMetaFile {
	e.t.Helper()
	var m albumMetaFile
	require.NoError(e.t, json.Unmarshal(e.read(filepath.Join(folderName, ".meta", "album_meta.json")), &m))
	return m
}

// Issue 31: an album whose name starts with a dot (Ente's own ".hidden",
// or "../escape") gets a folder file managers show, and album_meta.json
// says which albums are hidden or archived.
func TestDotAlbumsGetVisibleFoldersAndSayTheirVisibility(t *testing.T) {
	e := newEnv(t)
	hidden := e.u.AddAlbum(".hidden")
	hidden.SetVisibility(2)
	hidden.AddFile(enteapitest.FileSpec{Title: "h.jpg", Size: 10, Seed: 1})
	e.u.AddAlbum("../escape").AddFile(enteapitest.FileSpec{Title: "e.jpg", Size: 10, Seed: 2})
	archived := e.u.AddAlbum("Old")
	archived.SetVisibility(1)
	archived.AddFile(enteapitest.FileSpec{Title: "o.jpg", Size: 10, Seed: 3})
	e.mustRun()
	for _, rel := range []string{"hidden/h.jpg", "_escape/e.jpg", "Old/o.jpg"} {
		assert.True(t, e.exists(rel), rel)
	}
	assert.Equal(t, "hidden", e.albumMeta("hidden").Visibility)
	assert.Equal(t, "archived", e.albumMeta("Old").Visibility)
	assert.Empty(t, e.albumMeta("_escape").Visibility)

	archived.SetVisibility(0)
	e.mustRun()
	assert.Empty(t, e.albumMeta("Old").Visibility, "a change of visibility is written")
}

// A backup an older quak made with a dot-folder moves it to its visible
// name on the next run, downloading nothing.
func TestAnOlderDotFolderIsMovedToItsVisibleName(t *testing.T) {
	e := newEnv(t)
	hidden := e.u.AddAlbum(".hidden")
	hidden.AddFile(enteapitest.FileSpec{Title: "h.jpg", Size: 10, Seed: 1})
	e.mustRun()
	st, err := folder.At(e.dir).OpenState()
	require.NoError(t, err)
	colls, err := st.Collections()
	require.NoError(t, err)
	for _, c := range colls {
		c.Folder = ".hidden"
		require.NoError(t, st.PutCollection(c))
	}
	require.NoError(t, st.Close())
	require.NoError(t, os.Rename(filepath.Join(e.dir, "hidden"), filepath.Join(e.dir, ".hidden")))
	downloads := e.downloads()
	e.mustRun()
	assert.True(t, e.exists("hidden/h.jpg"))
	assert.False(t, e.exists(".hidden"))
	assert.Equal(t, downloads, e.downloads(), "nothing downloaded")
}
