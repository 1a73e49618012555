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
