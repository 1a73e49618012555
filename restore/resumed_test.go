package restore

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// A file sealed but never committed, whose content reached the target
// meanwhile (a restore from a copy of the backup, say): the resumed run
// takes the target's file, adds it to its albums and commits no second.
func TestAResumedRestoreCommitsNoSecondCopyOfWhatTheTargetGot(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "beach.jpg", Data: enteapitest.FakeJPEG("beach")})
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(500), 20)...)
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Equal(t, 1, sum.Failed, "the commit failed: the journal holds the file, uncommitted")
	e.s.ClearFaults("POST /files")

	e.dst.AddAlbum("Elsewhere").AddFile(enteapitest.FileSpec{Title: "beach.jpg", Data: enteapitest.FakeJPEG("beach")})
	commits := e.s.Requests("POST /files")
	sum = e.mustRestore()
	assert.Equal(t, commits, e.s.Requests("POST /files"), "nothing committed again")
	assert.Equal(t, 1, sum.Present)
	again := filepath.Join(t.TempDir(), "again")
	e.backup(e.dst, again)
	got := e.backedUp(again) // fails on two files of one content
	require.Len(t, got, 1)
	for _, c := range got {
		assert.Equal(t, "Elsewhere/album/0,Trip/album/0", c.Albums)
	}
}

// An original changed after quak opened it to encrypt it is never sent:
// what the upload URLs pin is checked, in the same pass that reads it,
// against the file as it was opened and the backup's hash.
func TestAnOriginalChangedAsItIsEncryptedIsNeverSent(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "beach.jpg", Data: enteapitest.FakeJPEG("beach")})
	e.backup(e.src, e.dir)
	path := filepath.Join(e.dir, "Trip", "beach.jpg")
	o := e.options()
	o.encrypt = func(key, header []byte, src io.Reader) (*secretstream.EncryptReader, error) {
		require.NoError(t, os.WriteFile(path, []byte("changed since it was checked"), 0o644))
		return secretstream.NewEncryptReader(key, header, src)
	}
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Failed)
	assert.Contains(t, sum.Failures[0].Error, "beach.jpg changed while quak read it")
	assert.Equal(t, 0, e.s.Requests("POST /files/upload-url"), "nothing of it is sent")
	assert.Equal(t, 0, e.s.Requests("POST /files"))
}

// Two originals of the same bytes under two names are two files, as
// Ente's own uploader keeps them (UP.9): each comes back.
func TestTwoOriginalsOfOneContentUnderTwoNamesBothComeBack(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: enteapitest.FakeJPEG("same"), Caption: "first"})
	trip.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: enteapitest.FakeJPEG("same"), Caption: "second"})
	e.backup(e.src, e.dir)
	sum := e.mustRestore()
	assert.Equal(t, 2, sum.Uploaded)
	assert.Zero(t, sum.Present)
	sum = e.mustRestore()
	assert.Zero(t, sum.Uploaded, "a second restore finds both")
	assert.Equal(t, 2, sum.Present)
}
