package backup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// rewrite replaces the file at rel as most editors do: a new file renamed
// over the old name (a new inode, the hard link broken).
func (e *env) rewrite(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	require.NoError(e.t, os.WriteFile(p+".new", []byte(content), 0o644))
	require.NoError(e.t, os.Rename(p+".new", p))
}

// editInPlace writes content into the file at rel itself (every hard link
// to it sees the edit).
func (e *env) editInPlace(rel, content string) {
	e.t.Helper()
	require.NoError(e.t, os.WriteFile(filepath.Join(e.dir, rel), []byte(content), 0o644))
}

func (e *env) warnings() string {
	var out []string
	for _, ev := range e.kinds(FileWarning) {
		out = append(out, ev.Err.Error())
	}
	return strings.Join(out, "\n")
}

// Issue 31: sidecars in the date view that another tool rewrote, or that
// the user edited in place, are the user's: a caption edit on the server
// rewrites the album's sidecars but never theirs, and never takes them out
// of the date view.
func TestTheDateViewsSidecarsTheUserRewroteAreKept(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	var files []*enteapitest.File
	for i, title := range []string{"x.jpg", "y.jpg", "w.jpg"} {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: title, Size: 20, Seed: byte(i + 1), CreationTime: june}))
	}
	e.mustRun()
	day := filepath.Join(DateViewDir, "2024", "06")
	mine := map[string]string{
		filepath.Join(day, sidecars.XMPName("y.jpg")):     "my y.xmp",
		filepath.Join(day, sidecars.TakeoutName("x.jpg")): `{"mine": "x"}`,
	}
	for rel, content := range mine {
		e.rewrite(rel, content)
	}
	inPlace := filepath.Join(day, sidecars.XMPName("w.jpg"))
	e.editInPlace(inPlace, "my w.xmp")
	mine[inPlace] = "my w.xmp"
	for _, f := range files {
		f.Edit(func(s *enteapitest.FileSpec) { s.Caption = "new caption" })
	}
	e.mustRun()
	for rel, content := range mine {
		assert.Equal(t, content, string(e.read(rel)), "%s is the user's", rel)
	}
	assert.Contains(t, e.warnings(), "left as yours")
	assert.Contains(t, string(e.read(filepath.Join("A", sidecars.XMPName("y.jpg")))), "new caption", "the album's own sidecar is kept in step")
	assert.Contains(t, string(e.read(filepath.Join(day, sidecars.XMPName("x.jpg")))), "new caption", "an untouched date-view sidecar follows")

	e.views.XMP, e.views.Sidecars = false, sidecars.Ente
	e.mustRun()
	for rel, content := range mine {
		assert.Equal(t, content, string(e.read(rel)), "%s stays when its kind of sidecar is turned off", rel)
	}
}

// Issue 31: an album's Takeout metadata.json the user edited, or wrote
// before --sidecars takeout was turned on, is the user's: never rewritten,
// with a warning, while quak's own follows album renames.
func TestAnAlbumsTakeoutFileTheUserWroteIsKept(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 20, Seed: 1})
	b.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 20, Seed: 2})
	e.mustRun()
	// B's file is the user's before quak writes any.
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "B", sidecars.TakeoutAlbumFile), []byte(`{"title":"mine"}`), 0o644))
	e.views = Views{Sidecars: sidecars.Takeout}
	e.mustRun()
	assert.Equal(t, `{"title":"mine"}`, string(e.read(filepath.Join("B", sidecars.TakeoutAlbumFile))))
	assert.Contains(t, e.warnings(), "not what quak wrote there")
	assert.Contains(t, string(e.read(filepath.Join("A", sidecars.TakeoutAlbumFile))), `"A"`)

	// A's, quak's, follows a rename until the user edits it.
	a.Rename("A2")
	e.mustRun()
	assert.Contains(t, string(e.read(filepath.Join("A2", sidecars.TakeoutAlbumFile))), `"A2"`)
	e.rewrite(filepath.Join("A2", sidecars.TakeoutAlbumFile), `{"title":"my A"}`)
	a.Rename("A3")
	e.mustRun()
	assert.Equal(t, `{"title":"my A"}`, string(e.read(filepath.Join("A3", sidecars.TakeoutAlbumFile))))

	e.views = Views{}
	e.mustRun()
	assert.Equal(t, `{"title":"my A"}`, string(e.read(filepath.Join("A3", sidecars.TakeoutAlbumFile))), "never removed either")
	assert.Equal(t, `{"title":"mine"}`, string(e.read(filepath.Join("B", sidecars.TakeoutAlbumFile))))
}

// A folder an older quak wrote records its sidecars without their hashes.
// A sidecar of such a folder that holds what quak writes is still quak's,
// and follows the file; one the user rewrote is theirs, and is kept.
func TestSidecarsRecordedWithoutTheirHashes(t *testing.T) {
	e := newEnv(t)
	e.views = Views{XMP: true}
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 20, Seed: 1})
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 20, Seed: 2})
	e.mustRun()
	st, err := folder.At(e.dir).OpenState()
	require.NoError(t, err)
	for _, f := range []*enteapitest.File{x, y} {
		rec, err := st.File(f.ID)
		require.NoError(t, err)
		require.NotEmpty(t, rec.Entries[a.ID].SidecarHashes)
		rec.Entries[a.ID].SidecarHashes = nil
		require.NoError(t, st.Commit([]*state.File{rec}, nil))
	}
	require.NoError(t, st.Close())

	e.rewrite(filepath.Join("A", sidecars.XMPName("y.jpg")), "my y.xmp")
	y.Edit(func(s *enteapitest.FileSpec) { s.Caption = "new caption" })
	x.Edit(func(s *enteapitest.FileSpec) { s.Title = "x2.jpg" })
	e.mustRun()
	assert.Equal(t, "my y.xmp", string(e.read(filepath.Join("A", sidecars.XMPName("y.jpg")))))
	assert.Contains(t, e.warnings(), "left as yours")
	assert.False(t, e.exists(filepath.Join("A", sidecars.XMPName("x.jpg"))), "quak's, it follows its file's new name")
	assert.True(t, e.exists(filepath.Join("A", sidecars.XMPName("x2.jpg"))))
}
