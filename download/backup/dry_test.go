package backup

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// snapshot is every path under dir with its content hash, mode and mtime.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		v := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[rel] = v
		return nil
	}))
	return out
}

// decisions are a run's events that say what it does to the folder.
func (e *env) decisions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.events {
		switch ev.Kind {
		case FileSaved, FileLinked, MetadataUpdated, FileRenamed, DeletedOnServer, AlbumRenamed, AlbumDeleted, FilePruned, AlbumPruned:
			out = append(out, fmt.Sprintf("%d %d %d %s %d", ev.Kind, ev.FileID, ev.CollectionID, ev.Path, ev.Bytes))
		}
	}
	sort.Strings(out)
	return out
}

func (e *env) dryRun() *Summary {
	e.t.Helper()
	o := e.options()
	o.DryRun = true
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	sum, err := Run(context.Background(), o)
	require.NoError(e.t, err)
	return sum
}

func TestDryRunWritesNothingAndForetellsTheRealRun(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	edited := a.AddFile(enteapitest.FileSpec{Title: "edit.jpg", Size: 100, Seed: 1})
	renamed := a.AddFile(enteapitest.FileSpec{Title: "old-name.jpg", Size: 100, Seed: 2})
	trashed := a.AddFile(enteapitest.FileSpec{Title: "trash.jpg", Size: 100, Seed: 3})
	e.mustRun()

	// Every kind of change the next run will meet.
	a.AddFile(enteapitest.FileSpec{Title: "new.jpg", Size: 5 << 20, Seed: 4})
	a.AddFile(enteapitest.FileSpec{Title: "NEW.JPG", Size: 10, Seed: 5}) // a name collision
	b.Add(edited)                                                        // a link into another album
	edited.Edit(func(f *enteapitest.FileSpec) { f.Caption = "now with a caption" })
	renamed.Edit(func(f *enteapitest.FileSpec) { f.EditedName = "new-name.jpg" })
	trashed.Trash()
	b.Rename("B renamed")
	fresh := e.u.AddAlbum("C")
	fresh.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 10, Seed: 6})
	fresh.Add(renamed)

	before := snapshot(t, e.dir)
	downloads := e.downloads()
	dry := e.dryRun()
	dryDecisions := e.decisions()
	assert.Equal(t, before, snapshot(t, e.dir), "a dry run changed the folder or its state")
	assert.Equal(t, downloads, e.downloads(), "a dry run downloaded")
	require.NotEmpty(t, dryDecisions)
	t.Logf("dry run decided:\n%s", strings.Join(dryDecisions, "\n"))

	real := e.mustRun()
	assert.Equal(t, dryDecisions, e.decisions(), "the dry run's report differs from what the real run did")
	for _, c := range []struct {
		name     string
		dry, got int
	}{{"new", dry.New, real.New}, {"linked", dry.Linked, real.Linked}, {"updated", dry.Updated, real.Updated},
		{"deleted", dry.DeletedOnServer, real.DeletedOnServer}} {
		assert.Equal(t, c.got, c.dry, c.name)
	}
	assert.Equal(t, real.Bytes, dry.Bytes, "bytes to download")
	assert.Equal(t, 3, real.New)
}

func TestDryRunOnANewFolderLeavesNoTrace(t *testing.T) {
	e := newEnv(t)
	e.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	sum := e.dryRun()
	assert.Equal(t, 1, sum.New)
	entries, err := os.ReadDir(e.dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "not even .quak")
}

func TestDryRunWhileABackupRuns(t *testing.T) {
	e := newEnv(t)
	e.mustRun()
	st, err := folder.At(e.dir).OpenState()
	require.NoError(t, err)
	defer func() { _ = st.Close() }()
	o := e.options()
	o.DryRun = true
	_, err = Run(context.Background(), o)
	assert.ErrorIs(t, err, ErrLocked)
}

// A dry run with --prune names what would move and moves nothing.
func TestDryRunPrune(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	e.mustRun()
	f.Trash()
	before := snapshot(t, e.dir)
	o := e.options()
	o.DryRun, o.Prune = true, true
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned)
	assert.Equal(t, before, snapshot(t, e.dir))
}
