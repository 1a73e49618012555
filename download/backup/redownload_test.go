package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A file to download again (quak verify found it changed) whose album is
// no longer shared, or a collaborator's file in one's own album: museum
// answers 403 for its entry. The run goes on, fails each by name, and
// backs up the rest; it does not abort on every later --verify.
func TestRedownloadOfAFileNoLongerSharedGoesOn(t *testing.T) {
	e := newEnv(t)
	bob := e.s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	theirs := bob.AddAlbum("Bob's")
	shared := theirs.AddFile(enteapitest.FileSpec{Title: "shared.jpg", Size: 10, Seed: 1})
	theirs.ShareWith(e.u, "VIEWER")
	mine := e.u.AddAlbum("Mine")
	mine.ShareWith(bob, "COLLABORATOR")
	collab := mine.AddFileBy(bob, enteapitest.FileSpec{Title: "collab.jpg", Size: 10, Seed: 2})
	e.mustRun()
	for _, p := range []string{"Bob's/shared.jpg", "Mine/collab.jpg"} {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, p), []byte("damaged"), 0o644))
	}
	theirs.Unshare(e.u)
	later := mine.AddFile(enteapitest.FileSpec{Title: "later.jpg", Size: 10, Seed: 3})

	o := e.options()
	o.Redownload = []int64{shared.ID, collab.ID}
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	e.same("Mine/later.jpg", later.Plaintext())
	assert.Equal(t, 1, sum.AlbumsDeleted, "the unshared album was seen")
	failed := map[int64]string{}
	for _, ev := range e.kinds(FileFailed) {
		failed[ev.FileID] = ev.Album
	}
	assert.Equal(t, map[int64]string{shared.ID: "Bob's", collab.ID: "Mine"}, failed, "each file that cannot be fetched again fails, named with its album")
	assert.Equal(t, 2, sum.Failed)

	// Shared again: the album is back, and so is the file's copy.
	theirs.ShareWith(e.u, "VIEWER")
	o.Redownload = []int64{shared.ID}
	_, err = Run(context.Background(), o)
	require.NoError(t, err)
	e.same("Bob's/shared.jpg", shared.Plaintext())
}

// A new file in two albums that fails in both is retried next run in
// both: saved once and placed in each album, not only in the last one
// whose listing showed it.
func TestAFailedFileInTwoAlbumsLandsInBoth(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "both.jpg", Size: 100, Seed: 1})
	b.Add(f)
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), enteapitest.Repeat(enteapitest.Status(500), 8)...)
	sum := e.mustRun()
	require.Positive(t, sum.Failed)
	sum = e.mustRun()
	assert.Equal(t, 1, sum.New)
	assert.Equal(t, 1, sum.Linked)
	e.same("A/both.jpg", f.Plaintext())
	e.same("B/both.jpg", f.Plaintext())
	again := e.mustRun()
	assert.Zero(t, again.New+again.Linked)
}

// A file to download again that left one of its albums (404 there) is
// fetched through another.
func TestRedownloadFallsBackToAnotherAlbum(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	b.Add(f)
	e.mustRun()
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "B", "x.jpg"), []byte("damaged"), 0o644))
	a.Remove(f) // not yet seen by the backup
	o := e.options()
	o.Redownload = []int64{f.ID}
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	e.same("B/x.jpg", f.Plaintext())
	assert.Empty(t, e.kinds(FileWarning))
}

// A file the filters leave out stays left out, run after run, until the
// filters take it.
func TestAFilteredFileStaysOut(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "pic.jpg", Size: 10, Seed: 1})
	clip := a.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 10, Seed: 2})
	o := e.options()
	o.Filter.SkipVideos = true
	for i := 0; i < 2; i++ {
		sum, err := Run(context.Background(), o)
		require.NoError(t, err)
		assert.False(t, e.exists("A/clip.mp4"), "run %d downloaded a video --skip-videos leaves out", i+1)
		assert.Equal(t, 1-i, sum.Skipped, "left out once, and not looked at again while the filters are the same")
	}
	sum := e.mustRun()
	assert.Equal(t, 1, sum.New)
	e.same("A/clip.mp4", clip.Plaintext())
}
