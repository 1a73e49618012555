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
	"github.com/quak-photos/quak/download/sidecars"
)

// darktable (and digiKam, exiftool -tagsfromfile, Lightroom's "write XMP")
// writes PHOTO.EXT.xmp, the very name of quak's --xmp sidecar. Once it no
// longer holds what quak wrote it is the user's: a caption edit on the
// server does not overwrite it, a warning names it, and later runs leave it.
func TestAnXMPRewrittenByAnotherToolIsTheUsersAndNotOverwritten(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	e.views = Views{Sidecars: sidecars.None, XMP: true, Zone: est}
	e.mustRun()
	require.True(t, e.exists("A/x.jpg.xmp"))
	darktable := []byte(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><darktable:history>two hours of edits</darktable:history></rdf:RDF></x:xmpmeta>`)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A", "x.jpg.xmp"), darktable, 0o644))

	x.Edit(func(s *enteapitest.FileSpec) { s.Caption = "at the beach" })
	e.mustRun()
	e.same("A/x.jpg.xmp", darktable)
	warned := false
	for _, ev := range e.kinds(FileWarning) {
		warned = warned || (ev.Err != nil && strings.Contains(ev.Err.Error(), "x.jpg.xmp"))
	}
	assert.True(t, warned, "a warning names the sidecar left as the user's")

	e.mustRun()
	e.same("A/x.jpg.xmp", darktable)

	// A rename on the server moves quak's files, not the user's.
	x.Edit(func(s *enteapitest.FileSpec) { s.Title = "y.jpg" })
	e.mustRun()
	require.True(t, e.exists("A/y.jpg"))
	e.same("A/x.jpg.xmp", darktable)
}

// The same with no change on the server at all: neither an ordinary run
// nor a --metadata-only run rewrites it.
func TestAnXMPRewrittenByAnotherToolSurvivesQuietRuns(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	e.views = Views{Sidecars: sidecars.None, XMP: true, Zone: est}
	e.mustRun()
	darktable := []byte(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><darktable:history>edits</darktable:history></x:xmpmeta>`)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A", "x.jpg.xmp"), darktable, 0o644))
	e.mustRun()
	e.same("A/x.jpg.xmp", darktable)
	o := e.options()
	o.MetadataOnly = true
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	e.same("A/x.jpg.xmp", darktable)
}

// A sidecar quak still holds as it wrote it is kept in step: a caption
// edit rewrites it, and a deleted one comes back with --metadata-only.
func TestAnXMPQuakWroteIsKeptInStep(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	e.views = Views{Sidecars: sidecars.None, XMP: true, Zone: est}
	e.mustRun()
	x.Edit(func(s *enteapitest.FileSpec) { s.Caption = "at the beach" })
	e.mustRun()
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "at the beach")
	x.Edit(func(s *enteapitest.FileSpec) { s.Caption = "at the lake" })
	e.mustRun()
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "at the lake")
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A", "x.jpg.xmp")))
	o := e.options()
	o.MetadataOnly = true
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, string(e.read("A/x.jpg.xmp")), "at the lake")
}

// --prune moves quak's sidecars to the trash with the file, never one
// another tool rewrote: that stays where it is.
func TestPruneLeavesAnXMPRewrittenByAnotherTool(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june})
	a.AddFile(enteapitest.FileSpec{Title: "keep.jpg", Size: 100, Seed: 2, CreationTime: june})
	e.views = Views{Sidecars: sidecars.None, XMP: true, Zone: est}
	e.mustRun()
	darktable := []byte(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><darktable:history>edits</darktable:history></x:xmpmeta>`)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A", "x.jpg.xmp"), darktable, 0o644))
	a.Remove(x)
	sum, err := e.prune(100)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Pruned)
	assert.False(t, e.exists("A/x.jpg"), "the file went to the trash")
	e.same("A/x.jpg.xmp", darktable)
	assert.False(t, e.exists(filepath.Join(trashToday, "A", "x.jpg.xmp")), "the user's XMP is not in the trash")
	assert.True(t, e.exists("A/keep.jpg.xmp"))
}
