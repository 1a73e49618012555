//go:build unix

package restore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/folder/foldertest"
)

// A backup on a read-only mount (a snapshot, a restic or borg mount) is
// restored with its journal kept elsewhere, said so, and exactly once: a
// second run finds that journal again and uploads nothing.
func TestARestoreFromAReadOnlyBackupKeepsItsJournalElsewhere(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	foldertest.ReadOnly(t, e.dir)

	_, err := e.restoreWith(e.options())
	var de *folder.DirError
	require.ErrorAs(t, err, &de, "nowhere to keep a journal")
	assert.Contains(t, err.Error(), "cannot be written")

	o := e.options()
	o.Journals = filepath.Join(t.TempDir(), "journals")
	pv, sum, err := e.previewOf(o)
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.Equal(t, 6, sum.Uploaded)
	assert.Equal(t, JournalReadOnly, pv.JournalWhy)
	assert.True(t, strings.HasPrefix(pv.Journal, o.Journals+string(filepath.Separator)), pv.Journal)

	pv, sum, err = e.previewOf(o)
	require.NoError(t, err)
	assert.Zero(t, sum.Uploaded, "a second run uploads nothing")
	assert.True(t, pv.Resuming)
	assert.Equal(t, JournalReadOnly, pv.JournalWhy, "found again, and said why it is there")
	e.sameAsSource()
}

// A restore interrupted before its commits were answered, whose backup
// then became read-only (the same backup, from a snapshot), goes on from
// the journal it kept in the folder: nothing is sealed or sent twice.
func TestARestoreGoesOnFromTheJournalOfAFolderNowReadOnly(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: enteapitest.FakeJPEG("a")})
	trip.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: enteapitest.FakeJPEG("b")})
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(400), 2)...)
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Equal(t, 2, sum.Failed)
	minted := e.s.Requests("POST /files/upload-url")

	foldertest.ReadOnly(t, e.dir)
	o := e.options()
	o.Journals = filepath.Join(t.TempDir(), "journals")
	sum, err = e.restoreWith(o)
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.Equal(t, 2, sum.Uploaded)
	assert.Equal(t, minted, e.s.Requests("POST /files/upload-url"), "the folder's records were taken up: nothing sealed again")
	e.sameAsSource()
}

// A journal kept in the store (--journal) is found there again by a run
// that does not ask for it.
func TestAJournalKeptInTheStoreIsFoundAgain(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	o.Journals, o.JournalsAlways = filepath.Join(t.TempDir(), "journals"), true
	pv, _, err := e.previewOf(o)
	require.NoError(t, err)
	assert.Equal(t, JournalAsked, pv.JournalWhy)
	none, err := folder.At(e.dir).ExistingJournal(e.s.URL(), e.dst.ID)
	require.NoError(t, err)
	assert.Nil(t, none, "nothing kept in the folder")

	o.JournalsAlways = false
	pv, sum, err := e.previewOf(o)
	require.NoError(t, err)
	assert.Equal(t, JournalFound, pv.JournalWhy)
	assert.True(t, pv.Resuming)
	assert.Zero(t, sum.Uploaded)
}

// A dry run of a read-only backup needs no place for a journal.
func TestADryRunOfAReadOnlyBackupNeedsNoJournal(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	foldertest.ReadOnly(t, e.dir)
	o := e.options()
	o.DryRun = true
	pv, sum, err := e.previewOf(o)
	require.NoError(t, err)
	assert.Equal(t, 6, sum.Uploaded)
	assert.Equal(t, JournalReadOnly, pv.JournalWhy)
	assert.Empty(t, pv.Journal)
}

// A run holds DIR's lock, and the journal's when it is kept in a store,
// for as long as it runs, and lets both go when it is stopped.
func TestARunHoldsItsLocksUntilItEnds(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.s.InjectUpload(enteapitest.StepPut, enteapitest.StallHeaders())
	o := e.options()
	o.Journals, o.JournalsAlways = filepath.Join(t.TempDir(), "journals"), true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, o)
		done <- err
	}()
	select {
	case <-e.s.Stalled:
	case <-awaitBound():
		t.Fatal("the upload never came")
	}
	_, err := folder.At(e.dir).Lock()
	assert.ErrorIs(t, err, folder.ErrLocked, "DIR's lock is held")
	j, err := folder.JournalStore{Root: o.Journals}.Existing("quak backup of user "+itoa(e.src.ID)+" on "+e.s.URL(), e.s.URL(), e.dst.ID)
	require.NoError(t, err)
	require.NotNil(t, j)
	_, err = j.Lock()
	assert.ErrorIs(t, err, folder.ErrLocked, "the journal's lock is held")
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-awaitBound():
		t.Fatal("the run did not stop")
	}
	unlock, err := folder.At(e.dir).Lock()
	require.NoError(t, err)
	unlock()
	unlock, err = j.Lock()
	require.NoError(t, err)
	unlock()
}

// A run refused by a journal another run holds lets DIR's lock go.
func TestARunRefusedByAHeldJournalLetsDIRGo(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	o.Journals, o.JournalsAlways = filepath.Join(t.TempDir(), "journals"), true
	j, err := folder.JournalStore{Root: o.Journals}.Open("quak backup of user "+itoa(e.src.ID)+" on "+e.s.URL(), e.s.URL(), e.dst.ID)
	require.NoError(t, err)
	unlock, err := j.Lock()
	require.NoError(t, err)
	defer unlock()
	_, err = e.restoreWith(o)
	assert.ErrorIs(t, err, folder.ErrLocked)
	free, err := folder.At(e.dir).Lock()
	require.NoError(t, err, "DIR's lock went with the refused run")
	free()
}
