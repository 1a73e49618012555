package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// albumFiles lists every file under DIR outside .quak: what photo managers
// scanning the album folders see.
func (e *env) albumFiles() []string { return e.walk() }

// A download cut for good keeps its partial plaintext only in quak's own
// temp area: nothing but finished files and sidecars is ever in an album
// folder.
func TestAFailedDownloadLeavesNothingInTheAlbumFolder(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Hostile")
	ok := a.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Size: 100})
	f := a.AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 9})
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), enteapitest.Repeat(enteapitest.CutAfter(wireChunk+10), 8)...)
	o := e.options()
	o.ResumeAbove = 8 << 20
	o.Streams = 1 // several ranges would each resume, and finish the file
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Failed)
	assert.ElementsMatch(t, []string{"Hostile/ok.jpg", "Hostile/.meta/ok.jpg.json", "Hostile/.meta/album_meta.json"}, e.albumFiles())
	e.same("Hostile/ok.jpg", ok.Plaintext())
	assert.Len(t, e.keptParts(), 1, "the resumable part is kept, in quak's temp area")
}

// Temp files are found by where they are, never by their name: a shared
// file titled like one is saved and kept with its sidecar, and files in
// the trash or in the user's own folders are never swept.
func TestTheSweepTouchesOnlyQuaksTempArea(t *testing.T) {
	e := newEnv(t)
	evil := e.u.AddAlbum("Shared").AddFile(enteapitest.FileSpec{Title: ".quak-tmp-evil.jpg", Size: 50, Seed: 3})
	e.mustRun()
	e.same("Shared/.quak-tmp-evil.jpg", evil.Plaintext())
	mine := []string{"Mine/.quak-tmp-notes.txt", ".quak/trash/2026-12-01/Shared/.quak-tmp-old.jpg"}
	for _, p := range mine {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(e.dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, p), []byte("keep"), 0o644))
	}
	leftover := filepath.Join(folder.At(e.dir).Temp(), ".quak-tmp-123")
	require.NoError(t, os.MkdirAll(filepath.Dir(leftover), 0o700))
	require.NoError(t, os.WriteFile(leftover, []byte("partial"), 0o600))

	e.mustRun()
	e.same("Shared/.quak-tmp-evil.jpg", evil.Plaintext())
	assert.True(t, e.exists("Shared/.meta/.quak-tmp-evil.jpg.json"), "the sidecar of a file named like a temp file was swept")
	for _, p := range mine {
		assert.True(t, e.exists(p), "%s was swept", p)
	}
	assert.False(t, e.exists(strings.TrimPrefix(leftover, e.dir+"/")), "a leftover in quak's temp area stays")
	assert.Len(t, e.kinds(LeftoversRemoved), 1)
}

// A file whose sidecar cannot be written is not saved: no file at a final
// name without the sidecar that says whose it is.
func TestNoFileWithoutItsSidecar(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Size: 10, Seed: 1})
	e.mustRun()
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 2})
	// A folder where its sidecar goes: the rename onto it fails, even as root.
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "A", ".meta", "x.jpg.json", "in the way"), 0o755))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Failed)
	assert.False(t, e.exists("A/x.jpg"))
	require.NoError(t, os.RemoveAll(filepath.Join(e.dir, "A", ".meta", "x.jpg.json")))
	sum = e.mustRun()
	assert.Equal(t, 1, sum.New)
	e.same("A/x.jpg", f.Plaintext())
	e.noTemps()
}
