package restore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// size is what the upload of an original stores without its thumbnail,
// exactly: a live photo's archive as writeLive makes it.
func TestSizeIsTheCiphertextOfWhatIsUploaded(t *testing.T) {
	dir := t.TempDir()
	img, vid := filepath.Join(dir, "a.heic"), filepath.Join(dir, "a.mov")
	require.NoError(t, os.WriteFile(img, make([]byte, 1000), 0o600))
	require.NoError(t, os.WriteFile(vid, make([]byte, 3000), 0o600))
	r := &run{}
	assert.Equal(t, secretstream.CiphertextSize(1000), r.size(&original{parts: []string{img}}))
	var zipped bytes.Buffer
	hashes := []string{hashOf(make([]byte, 1000)), hashOf(make([]byte, 3000))}
	_, err := writeLive(context.Background(), &zipped, []string{img, vid}, hashes, nil)
	require.NoError(t, err)
	assert.Equal(t, secretstream.CiphertextSize(int64(zipped.Len())), r.size(&original{parts: []string{img, vid}}))
}

func hashOf(b []byte) string {
	h := keys.NewHash()
	h.Write(b)
	return keys.EncodeB64(h.Sum(nil))
}

// A file whose objects went out before a crash is still to be stored:
// the next run counts it against the target's room.
func TestRestoreCountsAFileSentButNotCommittedAgainstTheQuota(t *testing.T) {
	e := newEnv(t)
	e.src.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "one.jpg", Data: enteapitest.FakeJPEG("one")})
	e.backup(e.src, e.dir)
	e.s.Inject("POST /files", enteapitest.Status(401))
	_, err := e.restoreWith(e.options())
	require.Error(t, err)
	e.dst.SetStorage(e.dst.Usage() + 1000)
	_, err = e.restoreWith(e.options())
	var qe *QuotaError
	require.ErrorAs(t, err, &qe)
	assert.Equal(t, 1, e.s.Requests("POST /files"), "nothing is sent beyond the room")
}
