package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/thumbnails"
)

// previewOf runs a restore with o and returns what it said first.
func (e *env) previewOf(o Options) (*Preview, *Summary, error) {
	var pv *Preview
	o.Confirm = func(p *Preview) error {
		pv = p
		return nil
	}
	sum, err := e.restoreWith(o)
	return pv, sum, err
}

// The preview names the source and the target and how many files the
// target holds, and how much is to be uploaded: what the run then
// uploads, to the byte, and what a dry run says.
func TestThePreviewSaysWhatTheRunUploads(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.dst.AddAlbum("Mine").AddFile(enteapitest.FileSpec{Title: "mine.jpg", Data: enteapitest.FakeJPEG("mine")})
	dry := e.options()
	dry.DryRun = true
	pv, drySum, err := e.previewOf(dry)
	require.NoError(t, err)
	assert.Equal(t, Origin{Kind: FromBackup, Email: e.src.Email, Endpoint: e.s.URL(), UserID: e.src.ID}, pv.From)
	assert.Equal(t, e.dst.Email, pv.ToEmail)
	assert.Equal(t, 1, pv.ToFiles, "what the target holds before")
	assert.False(t, pv.Same)
	assert.False(t, pv.Resuming)
	assert.True(t, pv.DryRun)
	assert.Equal(t, 6, pv.Upload)
	assert.Equal(t, 6*int64(thumbEstimate), pv.ThumbBytes)

	real, sum, err := e.previewOf(e.options())
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.Equal(t, pv.Bytes, real.Bytes)
	assert.Equal(t, pv.Bytes, sum.Bytes, "the preview's bytes are the run's")
	assert.Equal(t, drySum.Bytes, sum.Bytes, "the dry run's bytes are the run's")
	assert.Positive(t, sum.ThumbBytes)
	assert.LessOrEqual(t, sum.ThumbBytes, drySum.ThumbBytes, "a dry run's thumbnails are the most they take")

	again, _, err := e.previewOf(e.options())
	require.NoError(t, err)
	assert.Equal(t, 7, again.ToFiles)
	assert.True(t, again.Resuming, "the journal of the first run")
	assert.Zero(t, again.Upload)
	assert.Zero(t, again.Bytes)
}

// What Confirm refuses ends the run before anything is sent.
func TestARefusedPreviewSendsNothing(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	no := errors.New("no")
	o.Confirm = func(*Preview) error { return no }
	_, err := e.restoreWith(o)
	assert.ErrorIs(t, err, no)
	assert.Zero(t, e.s.Requests("POST /files/upload-url"))
	assert.Zero(t, e.s.Requests("POST /collections"))
}

// A backup that never completed a run says so, with the files it listed
// and never saved; one that completed says nothing of the kind.
func TestThePreviewSaysABackupNeverCompleted(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: enteapitest.FakeJPEG("a")})
	e.backup(e.src, e.dir)
	o := e.options()
	o.DryRun = true
	pv, _, err := e.previewOf(o)
	require.NoError(t, err)
	assert.Nil(t, pv.Incomplete, "a backup that completed")

	lost := trip.AddFile(enteapitest.FileSpec{Title: "lost.jpg", Data: enteapitest.FakeJPEG("lost")})
	e.s.Inject(fmt.Sprintf("GET /files/download/%d", lost.ID), enteapitest.Repeat(enteapitest.Status(404), 20)...)
	require.NoError(t, os.Remove(folder.At(e.dir).LastSuccessPath()))
	e.backup(e.src, e.dir)
	pv, sum, err := e.previewOf(o)
	require.NoError(t, err)
	require.NotNil(t, pv.Incomplete)
	assert.Equal(t, 1, pv.Incomplete.Lacking)
	assert.Equal(t, folder.OutcomePartial, pv.Incomplete.LastOutcome)
	assert.False(t, pv.Incomplete.LastRun.IsZero())
	assert.Equal(t, 1, sum.LeftOut)
}

// Missing thumbnail programs are counted once, for the files to upload
// that need them.
func TestThePreviewCountsTheFilesAMissingProgramLeavesBlack(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "a.mp4", FileType: 1, Data: []byte("one video")})
	trip.AddFile(enteapitest.FileSpec{Title: "b.mp4", FileType: 1, Data: []byte("another video")})
	trip.AddFile(enteapitest.FileSpec{Title: "c.heic", Data: []byte("\x00\x00\x00\x18ftypheic and then some")})
	trip.AddFile(enteapitest.FileSpec{Title: "d.jpg", Data: enteapitest.FakeJPEG("d")})
	e.backup(e.src, e.dir)
	o := e.options()
	o.DryRun = true
	pv, _, err := e.previewOf(o)
	require.NoError(t, err)
	assert.Equal(t, []MissingTool{{Tool: "ffmpeg", Files: 2}, {Tool: "heif-dec", Files: 1}}, pv.Tools)

	all := thumbnails.Tools{LookPath: func(n string) (string, error) { return "/bin/" + n, nil },
		Run: func(context.Context, string, ...string) ([]byte, error) { return nil, errors.New("not here") }}
	o.Tools = &all
	pv, _, err = e.previewOf(o)
	require.NoError(t, err)
	assert.Empty(t, pv.Tools)
}

// sharedLibrary gives the source account an album of its own and one a
// friend shares with it (the friend's photo in it), and a photo of the
// friend's in its own album.
func sharedLibrary(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	friend := e.s.AddUser("carol@example.org", "pw", enteapitest.UserOptions{})
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "mine.jpg", Data: enteapitest.FakeJPEG("mine")})
	trip.ShareWith(friend, "COLLABORATOR")
	trip.AddFileBy(friend, enteapitest.FileSpec{Title: "hers.jpg", Data: enteapitest.FakeJPEG("hers")})
	family := friend.AddAlbum("Family")
	family.AddFile(enteapitest.FileSpec{Title: "family.jpg", Data: enteapitest.FakeJPEG("family")})
	family.ShareWith(e.src, "VIEWER")
	e.backup(e.src, e.dir)
	return e
}

// Into the account that was backed up, only what it owned comes back:
// albums others share with it are named and left out, and so are others'
// files in its own albums; --no-shared=false takes them as its own.
func TestARestoreIntoTheBackedUpAccountLeavesOthersFilesOut(t *testing.T) {
	e := sharedLibrary(t)
	mine := e.s.File(e.restoredTitles(t)["mine.jpg"])
	mine.Trash()
	o := e.options()
	o.Target = Target{Client: e.s.Client(nil).WithToken(e.src.Token()), Keys: keysOf(e.src), Email: e.src.Email, Endpoint: e.s.URL()}
	pv, sum, err := e.previewOf(o)
	require.NoError(t, err)
	require.Empty(t, sum.Failures)
	assert.True(t, pv.Same)
	assert.Equal(t, []string{"Family"}, pv.Shared)
	assert.Equal(t, []string{"Family"}, sum.Shared)
	assert.Equal(t, 1, sum.Uploaded, "the photo deleted there comes back")
	assert.Equal(t, 1, sum.Files)
	assert.Equal(t, 2, sum.Filtered, "the friend's two photos")

	o.Shared = SharedTake
	sum, err = e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Uploaded, "taken as its own")
	assert.Empty(t, sum.Shared)
}

// restoredTitles maps the source's backed-up titles to their file ids.
func (e *env) restoredTitles(t *testing.T) map[string]int64 {
	t.Helper()
	st, err := folder.At(e.dir).OpenStateReadOnly()
	require.NoError(t, err)
	defer func() { _ = st.Close() }()
	out := map[string]int64{}
	require.NoError(t, st.Files(func(f *state.File) error {
		out[f.Meta.Title] = f.ID
		return nil
	}))
	return out
}

// Into another account, shared albums come back as its own, unless left
// out.
func TestARestoreIntoAnotherAccountTakesSharedAlbumsUnlessToldNot(t *testing.T) {
	e := sharedLibrary(t)
	o := e.options()
	o.DryRun = true
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Uploaded)
	assert.Empty(t, sum.Shared)
	o.Shared = SharedLeave
	sum, err = e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, []string{"Family"}, sum.Shared)
}

// --albums and --exclude-albums choose albums as backup's do; a pattern
// that matches none is refused before anything is read of the target.
func TestARestoreTakesTheAlbumsChosen(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	o.DryRun = true
	o.Albums = filter.Albums{Include: []string{"tri*"}}
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 4, sum.Uploaded, "Trip's four originals")
	assert.Equal(t, 2, sum.Filtered)
	o.Albums = filter.Albums{Exclude: []string{"Trip"}}
	sum, err = e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Uploaded, "both.jpg in Family and the favourites, renamed.jpg, secret.jpg")
	o.Albums = filter.Albums{Include: []string{"Trp"}}
	_, err = e.restoreWith(o)
	var nm *filter.NoMatchError
	require.ErrorAs(t, err, &nm)
	assert.Equal(t, []string{"Trip"}, nm.Nearest[:1])
}
