package contract_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// What the contract tests make on a server, the way Ente's apps make it:
// an album under the account's master key, and files sealed under fresh
// keys, uploaded through pinned URLs and committed.

// album is an album a test made, and its key.
type album struct {
	id   int64
	name string
	key  []byte
}

// newAlbum makes an album, and opens the key museum answers with (for an
// album, the one sent).
func newAlbum(t *testing.T, se *session) album {
	t.Helper()
	key, nonce, nameNonce := random(t, 32), random(t, 24), random(t, 24)
	name := fmt.Sprintf("quak contract %d", time.Now().UnixNano())
	c, err := se.api.CreateCollection(context.Background(), apiclient.NewCollection{
		EncryptedKey: keys.SecretboxSeal(key, nonce, se.acct.MasterKey), KeyDecryptionNonce: nonce,
		EncryptedName: keys.SecretboxSeal([]byte(name), nameNonce, key), NameDecryptionNonce: nameNonce, Type: "album"})
	require.NoError(t, err)
	got, err := keys.SecretboxOpen(c.EncryptedKey, c.KeyDecryptionNonce, se.acct.MasterKey)
	require.NoError(t, err, "the album's key opens with the master key")
	require.Equal(t, key, got)
	return album{id: c.ID, name: name, key: key}
}

// upload is a file a test uploaded: what it sent and what it got.
type upload struct {
	id                 int64
	key                []byte // the file key
	title              string
	plaintext          []byte
	ciphertext, header []byte // the original, sealed as a stream
	thumb, thumbHeader []byte // the thumbnail, sealed as a blob
	thumbPlain         []byte
	committed          *apiclient.File
	body               []byte // the commit's body, as sent
}

// sealFile seals plaintext and thumb as Ente's apps do, under a new file
// key, with metadata naming title.
func sealFile(t *testing.T, title string, plaintext, thumb []byte) *upload {
	t.Helper()
	up := &upload{key: random(t, 32), title: title, plaintext: plaintext, thumbPlain: thumb}
	var err error
	up.header, err = secretstream.NewHeader(rand.Reader)
	require.NoError(t, err)
	up.ciphertext, err = secretstream.Encrypt(up.key, up.header, plaintext)
	require.NoError(t, err)
	up.thumb, up.thumbHeader, err = secretstream.EncryptBlob(rand.Reader, up.key, thumb)
	require.NoError(t, err)
	return up
}

// commitBody is the POST /files body of up, its objects at fileKey and
// thumbKey, into album a.
func (up *upload) commitBody(t *testing.T, a album, fileKey, thumbKey string) []byte {
	t.Helper()
	h := keys.NewHash()
	h.Write(up.plaintext)
	meta, err := json.Marshal(map[string]any{"title": up.title, "fileType": 0, "creationTime": time.Now().UnixMicro(),
		"modificationTime": time.Now().UnixMicro(), "hash": keys.EncodeB64(h.Sum(nil))})
	require.NoError(t, err)
	sealedMeta, metaHeader, err := secretstream.EncryptBlob(rand.Reader, up.key, meta)
	require.NoError(t, err)
	nonce := random(t, 24)
	nf := apiclient.NewFile{CollectionID: a.id, EncryptedKey: keys.SecretboxSeal(up.key, nonce, a.key), KeyDecryptionNonce: nonce,
		File:      apiclient.UploadedObject{ObjectKey: fileKey, DecryptionHeader: up.header, Size: int64(len(up.ciphertext))},
		Thumbnail: apiclient.UploadedObject{ObjectKey: thumbKey, DecryptionHeader: up.thumbHeader, Size: int64(len(up.thumb))},
		Metadata:  apiclient.SealedMetadata{EncryptedData: sealedMeta, DecryptionHeader: metaHeader}}
	body, err := nf.Body()
	require.NoError(t, err)
	return body
}

// put uploads data through a URL pinned to its length and MD5, and
// returns its object key.
func put(t *testing.T, se *session, data []byte) string {
	t.Helper()
	ctx := context.Background()
	sum := md5.Sum(data)
	u, err := se.api.UploadURL(ctx, int64(len(data)), sum)
	require.NoError(t, err)
	_, err = se.api.PutUpload(ctx, u.URL, bytes.NewReader(data), int64(len(data)), sum)
	require.NoError(t, err)
	return u.ObjectKey
}

// uploadFile uploads a file of plaintext with thumbnail thumb into album a
// and commits it.
func uploadFile(t *testing.T, se *session, a album, title string, plaintext, thumb []byte) *upload {
	t.Helper()
	up := sealFile(t, title, plaintext, thumb)
	up.body = up.commitBody(t, a, put(t, se, up.ciphertext), put(t, se, up.thumb))
	f, err := se.api.CreateFile(context.Background(), up.body)
	require.NoError(t, err)
	up.id, up.committed = f.ID, f
	return up
}

// photo is a test file: a little over one 4 MiB chunk, so it is two
// messages of the stream, and a range can cross between them.
func photo(t *testing.T) []byte {
	t.Helper()
	b, err := io.ReadAll(enteapitest.Content(4<<20+1000, byte(time.Now().UnixNano())))
	require.NoError(t, err)
	return b
}

func random(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// readAll reads an object's body to its end and closes it.
func readAll(t *testing.T, o *apiclient.Object) []byte {
	t.Helper()
	defer o.Body.Close()
	b, err := io.ReadAll(o.Body)
	require.NoError(t, err)
	return b
}

// call sends one API request that quak's client has no call for (a
// link's owner's routes) with the session's token, and returns the
// status and body.
func call(t *testing.T, s server, se *session, method, path string, in any) (int, []byte) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		require.NoError(t, err)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.endpoint()+path, body)
	require.NoError(t, err)
	req.Header.Set("X-Auth-Token", se.acct.Token)
	req.Header.Set("X-Client-Package", apiclient.ClientPackage)
	req.Header.Set("Content-Type", "application/json")
	resp, err := se.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}
