package folder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJournalKeepsEachTargetApart(t *testing.T) {
	f := prepared(t)
	a, err := f.Journal("https://api.ente.io", 7)
	require.NoError(t, err)
	b, err := f.Journal("http://localhost:8080", 7)
	require.NoError(t, err)
	again, err := f.Journal("https://api.ente.io/", 7)
	require.NoError(t, err)

	in := &Intent{Source: 11, Hash: "h", FileKey: []byte{1, 2, 3}, Body: []byte(`{"collectionID":5}`), Album: 5,
		File:  Object{Header: []byte{9}, Size: 100, MD5: []byte{8}, ObjectKey: "7/x", Parts: &Parts{Length: 5, ETags: []string{`"e"`, ""}}},
		Thumb: Object{Header: []byte{6}, Size: 17, MD5: []byte{5}, ObjectKey: "7/y", URL: "u", Sent: true}}
	require.NoError(t, a.PutIntent(in))
	got, err := again.Intent(11)
	require.NoError(t, err)
	assert.Equal(t, in, got, "the same server, however spelt, is the same journal")
	none, err := b.Intent(11)
	require.NoError(t, err)
	assert.Nil(t, none, "another server's journal knows nothing of it")

	require.NoError(t, a.PutAlbum(&AlbumIntent{Source: 3, Body: []byte(`{"type":"album"}`), ID: 44}))
	al, err := again.Album(3)
	require.NoError(t, err)
	assert.Equal(t, int64(44), al.ID)
	missing, err := again.Album(4)
	require.NoError(t, err)
	assert.Nil(t, missing)
}

func TestJournalRecordsArePrivateAndWholeOrMissing(t *testing.T) {
	f := prepared(t)
	j, err := f.Journal("e", 1)
	require.NoError(t, err)
	require.NoError(t, j.PutIntent(&Intent{Source: 1, FileKey: make([]byte, 32)}))
	fi, err := os.Stat(filepath.Join(j.dir, intentName(1)))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a file key is kept from other users")
	assert.Equal(t, filepath.Join(f.StateDir(), restoreDir), filepath.Dir(j.dir))

	require.NoError(t, os.WriteFile(filepath.Join(j.dir, intentName(2)), []byte("{"), 0o600))
	_, err = j.Intent(2)
	assert.ErrorContains(t, err, intentName(2), "a damaged record is an error, never taken for none")
}

// A record that is a link is never read through: a record planted
// elsewhere (a file id that is not the restore's) is not taken.
func TestJournalReadsNoRecordThroughALink(t *testing.T) {
	f := prepared(t)
	j, err := f.Journal("https://api.ente.io", 7)
	require.NoError(t, err)
	require.NoError(t, j.PutIntent(&Intent{Source: 11, FileID: 5}))
	planted := filepath.Join(t.TempDir(), "planted.json")
	require.NoError(t, os.WriteFile(planted, []byte(`{"source":12,"fileID":999}`), 0o600))
	require.NoError(t, os.Symlink(planted, filepath.Join(j.dir, intentName(12))))
	in, err := j.Intent(12)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a plain file")
	assert.Nil(t, in)
	own, err := j.Intent(11)
	require.NoError(t, err)
	assert.Equal(t, int64(5), own.FileID, "plain records read as ever")
}

// A store keeps one journal per source and target: the same source and
// target find the same journal again, another source or target another.
func TestAJournalStoreKeepsEachSourceAndTargetApart(t *testing.T) {
	s := JournalStore{Root: filepath.Join(t.TempDir(), "journals")}
	none, err := s.Existing("backup of 7", "https://api.ente.io", 9)
	require.NoError(t, err)
	assert.Nil(t, none, "nothing until one is opened")
	a, err := s.Open("backup of 7", "https://api.ente.io", 9)
	require.NoError(t, err)
	empty, err := a.Empty()
	require.NoError(t, err)
	assert.True(t, empty)
	require.NoError(t, a.PutIntent(&Intent{Source: 11, FileID: 5}))
	empty, err = a.Empty()
	require.NoError(t, err)
	assert.False(t, empty)

	again, err := s.Existing("backup of 7", "https://api.ente.io/", 9)
	require.NoError(t, err)
	require.NotNil(t, again)
	in, err := again.Intent(11)
	require.NoError(t, err)
	assert.Equal(t, int64(5), in.FileID)
	for _, other := range []struct {
		source, endpoint string
		user             int64
	}{{"backup of 8", "https://api.ente.io", 9}, {"backup of 7", "http://localhost", 9}, {"backup of 7", "https://api.ente.io", 10}} {
		j, err := s.Open(other.source, other.endpoint, other.user)
		require.NoError(t, err)
		in, err := j.Intent(11)
		require.NoError(t, err)
		assert.Nil(t, in, "%+v knows nothing of it", other)
	}
	b, err := os.ReadFile(filepath.Join(a.Dir(), "target.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"source":"backup of 7","endpoint":"https://api.ente.io","userID":9}`, string(b))
}

// A journal's lock keeps a second restore out, and its temp folder is
// its own.
func TestAJournalHasItsOwnLockAndTemp(t *testing.T) {
	j, err := JournalStore{Root: t.TempDir()}.Open("s", "e", 1)
	require.NoError(t, err)
	unlock, err := j.Lock()
	require.NoError(t, err)
	_, err = j.Lock()
	assert.ErrorIs(t, err, ErrLocked)
	unlock()
	unlock, err = j.Lock()
	require.NoError(t, err)
	unlock()
	tmp, err := j.Temp()
	require.NoError(t, err)
	fi, err := os.Stat(tmp)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, j.Dir(), filepath.Dir(tmp))
}

// Seeding copies what the other journal holds and this one lacks, and
// keeps what this one holds.
func TestSeedFromCopiesOnlyWhatIsMissing(t *testing.T) {
	f := prepared(t)
	old, err := f.Journal("e", 1)
	require.NoError(t, err)
	require.NoError(t, old.PutIntent(&Intent{Source: 1, FileID: 10}))
	require.NoError(t, old.PutIntent(&Intent{Source: 2, FileID: 20}))
	require.NoError(t, old.PutAlbum(&AlbumIntent{Source: 3, ID: 30}))
	j, err := JournalStore{Root: t.TempDir()}.Open("s", "e", 1)
	require.NoError(t, err)
	require.NoError(t, j.PutIntent(&Intent{Source: 2, FileID: 21}))
	require.NoError(t, j.SeedFrom(old))
	for source, want := range map[int64]int64{1: 10, 2: 21} {
		in, err := j.Intent(source)
		require.NoError(t, err)
		assert.Equal(t, want, in.FileID)
	}
	al, err := j.Album(3)
	require.NoError(t, err)
	assert.Equal(t, int64(30), al.ID)
	seen, err := f.ExistingJournal("e", 1)
	require.NoError(t, err)
	assert.Equal(t, old.Dir(), seen.Dir())
	none, err := f.ExistingJournal("e", 2)
	require.NoError(t, err)
	assert.Nil(t, none)
}

func TestDropIntentForgetsARecord(t *testing.T) {
	j, err := JournalStore{Root: t.TempDir()}.Open("s", "e", 1)
	require.NoError(t, err)
	require.NoError(t, j.PutIntent(&Intent{Source: 1, FileID: 10, Src: []SourceStat{{Size: 3, MTime: 4}}}))
	in, err := j.Intent(1)
	require.NoError(t, err)
	assert.Equal(t, []SourceStat{{Size: 3, MTime: 4}}, in.Src)
	require.NoError(t, j.DropIntent(1))
	in, err = j.Intent(1)
	require.NoError(t, err)
	assert.Nil(t, in)
	require.NoError(t, j.DropIntent(1), "dropping what is gone is no error")
}
