package restore

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
)

// journal is the restore's journal of e.dir into the target.
func (e *env) journal() *folder.Journal {
	e.t.Helper()
	j, err := folder.At(e.dir).ExistingJournal(e.s.URL(), e.dst.ID)
	require.NoError(e.t, err)
	require.NotNil(e.t, j)
	return j
}

// restoredAs is the target's file an original was restored as.
func (e *env) restoredAs(src *enteapitest.File) *enteapitest.File {
	e.t.Helper()
	in, err := e.journal().Intent(src.ID)
	require.NoError(e.t, err)
	require.NotNil(e.t, in)
	require.NotZero(e.t, in.FileID)
	return e.s.File(in.FileID)
}

// twoInTrip is a source account with two photos in Trip, backed up.
func twoInTrip(t *testing.T) (*env, *enteapitest.File, *enteapitest.File) {
	t.Helper()
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	a := trip.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: enteapitest.FakeJPEG("a")})
	b := trip.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: enteapitest.FakeJPEG("b")})
	e.backup(e.src, e.dir)
	return e, a, b
}

// A file deleted in the target after a restore comes back on the next:
// the journal's record of it is a hint the target no longer bears out.
func TestAFileDeletedInTheTargetAfterARestoreComesBack(t *testing.T) {
	e, a, _ := twoInTrip(t)
	e.mustRestore()
	e.restoredAs(a).Trash()

	sum := e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded, "the trashed file is uploaded again")
	assert.Equal(t, 1, sum.Present)
	assert.Zero(t, sum.AlbumsCreated, "its album is still there")
	assert.Contains(t, e.kinds(), Restarted)
	e.sameAsSource()
	assert.Zero(t, e.mustRestore().Uploaded, "and then it is there")
}

// A file and its album deleted in the target (the album's photos with
// it) both come back, never added again to an album that is gone nor
// from the trash (museum's 409 FILE_IN_TRASH).
func TestAFileAndItsAlbumDeletedInTheTargetComeBack(t *testing.T) {
	e, a, _ := twoInTrip(t)
	e.mustRestore()
	album := e.restoredAs(a).Albums()[0]
	album.TrashWithFiles()
	require.True(t, e.restoredAs(a).Trashed())

	sum := e.mustRestore()
	assert.Equal(t, 2, sum.Uploaded)
	assert.Equal(t, 1, sum.AlbumsCreated)
	assert.Zero(t, e.s.Requests("POST /collections/add-files"), "nothing is added from the trash")
	e.sameAsSource()
}

// A journal record copied over another original's is not that
// original's: neither its committed file nor its sealed upload is taken
// for the other.
func TestAJournalRecordCopiedOverAnothersIsNotTaken(t *testing.T) {
	t.Run("committed", func(t *testing.T) {
		e, a, b := twoInTrip(t)
		e.mustRestore()
		e.restoredAs(b).Trash()
		copyRecord(t, e.journal(), a.ID, b.ID)
		sum := e.mustRestore()
		assert.Equal(t, 1, sum.Uploaded, "b comes back")
		e.sameAsSource()
	})
	t.Run("sealed", func(t *testing.T) {
		e, a, b := twoInTrip(t)
		e.s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(400), 2)...)
		sum, err := e.restoreWith(e.options())
		require.NoError(t, err)
		require.Equal(t, 2, sum.Failed, "both sealed, neither committed")
		copyRecord(t, e.journal(), a.ID, b.ID)
		sum = e.mustRestore()
		assert.Equal(t, 2, sum.Uploaded)
		e.sameAsSource() // b's content, not a's twice
	})
}

// copyRecord puts the journal's record of from in the place of to's.
func copyRecord(t *testing.T, j *folder.Journal, from, to int64) {
	t.Helper()
	in, err := j.Intent(from)
	require.NoError(t, err)
	require.NotNil(t, in)
	b, err := os.ReadFile(filepath.Join(j.Dir(), "file-"+itoa(from)+".json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(j.Dir(), "file-"+itoa(to)+".json"), b, 0o600))
}

// A file half restored (sent, its commit unanswered) whose album was
// deleted in the target before the next run: the album is made again
// and the file restored into it.
func TestAHalfRestoredFileWhoseAlbumWasDeletedComesBack(t *testing.T) {
	e, _, _ := twoInTrip(t)
	e.s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(500), 40)...)
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Equal(t, 2, sum.Failed)
	e.s.ClearFaults("POST /files")
	al, err := e.journal().Album(firstAlbum(t, e))
	require.NoError(t, err)
	e.s.Album(al.ID).TrashWithFiles()

	sum = e.mustRestore()
	assert.Equal(t, 2, sum.Uploaded)
	assert.Equal(t, 1, sum.AlbumsCreated)
	e.sameAsSource()
}

// firstAlbum is the source id of the one album the backup holds.
func firstAlbum(t *testing.T, e *env) int64 {
	t.Helper()
	st, err := folder.At(e.dir).OpenStateReadOnly()
	require.NoError(t, err)
	defer func() { _ = st.Close() }()
	cols, err := st.Collections()
	require.NoError(t, err)
	require.Len(t, cols, 1)
	for id := range cols {
		return id
	}
	return 0
}

// A source file replaced between an interrupted run and the next (the
// backup saved a new version of it meanwhile) starts afresh: its old
// record, encrypted from other bytes, is dropped, and the new content
// is restored.
func TestASourceReplacedBetweenRunsStartsAfresh(t *testing.T) {
	e, a, _ := twoInTrip(t)
	e.s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(400), 2)...)
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Equal(t, 2, sum.Failed)
	a.Reupload(enteapitest.FakeJPEG("a, edited, and longer than it was"))
	e.backup(e.src, e.dir)

	sum = e.mustRestore()
	assert.Equal(t, 2, sum.Uploaded)
	e.sameAsSource()
}

// A source touched since it was encrypted (the same bytes, another
// time) starts afresh too: its record is not trusted to make the same
// ciphertext.
func TestASourceTouchedSinceItWasEncryptedStartsAfresh(t *testing.T) {
	e, _, _ := twoInTrip(t)
	e.s.Inject("POST /files", enteapitest.Repeat(enteapitest.Status(400), 2)...)
	_, err := e.restoreWith(e.options())
	require.NoError(t, err)
	path := filepath.Join(e.dir, "Trip", "a.jpg")
	require.NoError(t, os.Chtimes(path, past, past))
	sum := e.mustRestore()
	assert.Equal(t, 2, sum.Uploaded)
	assert.Contains(t, e.kinds(), Restarted)
	e.sameAsSource()
}

// A source that changes while it is sent fails by name with why, and
// its record is dropped: once it holds still again, the next run
// restores it, once.
func TestASourceChangingWhileItIsSentFailsByName(t *testing.T) {
	e, _, _ := twoInTrip(t)
	path := filepath.Join(e.dir, "Trip", "a.jpg")
	was, err := os.ReadFile(path)
	require.NoError(t, err)
	o := e.options()
	calls := 0
	o.encrypt = func(key, header []byte, src io.Reader) (*secretstream.EncryptReader, error) {
		if calls++; calls == 2 { // a.jpg's send, after its measure
			appendTo(t, path, "more")
		}
		return secretstream.NewEncryptReader(key, header, src)
	}
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	require.Len(t, sum.Failures, 1)
	assert.Equal(t, "a.jpg", sum.Failures[0].Title)
	assert.Contains(t, sum.Failures[0].Error, "a.jpg changed")
	in, err := e.journal().Intent(sum.Failures[0].Source)
	require.NoError(t, err)
	assert.Nil(t, in, "its record is dropped")

	require.NoError(t, os.WriteFile(path, was, 0o644))
	sum = e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded)
	e.sameAsSource()
}

var past = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (e *env) kinds() []Kind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Kind
	for _, ev := range e.events {
		out = append(out, ev.Kind)
	}
	return out
}

// An album's journal record copied over another album's is not taken:
// each album's files go into its own album.
func TestAnAlbumRecordCopiedOverAnothersIsNotTaken(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: enteapitest.FakeJPEG("a")})
	e.backup(e.src, e.dir)
	e.mustRestore()
	family := e.src.AddAlbum("Family")
	family.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: enteapitest.FakeJPEG("b")})
	e.backup(e.src, e.dir)
	j := e.journal()
	b, err := os.ReadFile(filepath.Join(j.Dir(), "album-"+itoa(firstAlbumNamed(t, e, "Trip"))+".json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(j.Dir(), "album-"+itoa(family.ID)+".json"), b, 0o600))
	sum := e.mustRestore()
	assert.Equal(t, 1, sum.AlbumsCreated, "Family is made, not taken for Trip")
	e.sameAsSource()
}

// firstAlbumNamed is the source id of the backup's album of that name.
func firstAlbumNamed(t *testing.T, e *env, name string) int64 {
	t.Helper()
	st, err := folder.At(e.dir).OpenStateReadOnly()
	require.NoError(t, err)
	defer func() { _ = st.Close() }()
	cols, err := st.Collections()
	require.NoError(t, err)
	for id, c := range cols {
		if c.Name == name {
			return id
		}
	}
	t.Fatalf("no album %q", name)
	return 0
}
