package enteapitest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// uploader is an account on a fake server, uploading through apiclient.
type uploader struct {
	t   *testing.T
	s   *enteapitest.Server
	u   *enteapitest.User
	c   *apiclient.Client
	rnd *counting
}

type counting struct{ n uint64 }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		c.n++
		p[i] = byte(c.n * 0x9e3779b1 >> 24)
	}
	return len(p), nil
}

func newUploader(t *testing.T) *uploader {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	return uploaderOn(t, s, "me@example.org")
}

func uploaderOn(t *testing.T, s *enteapitest.Server, email string) *uploader {
	t.Helper()
	u := s.AddUser(email, "pw", enteapitest.UserOptions{})
	return &uploader{t: t, s: s, u: u, c: s.Client(nil).WithToken(u.Token()), rnd: &counting{n: uint64(u.ID) << 20}}
}

func (up *uploader) keys() catalog.Keys {
	return catalog.Keys{UserID: up.u.ID, MasterKey: up.u.MasterKey, PublicKey: up.u.PublicKey, SecretKey: up.u.SecretKey}
}

// album creates an album through the API and opens what comes back.
func (up *uploader) album(name, typ string) *catalog.Album {
	up.t.Helper()
	key, err := keys.NewKey(up.rnd)
	require.NoError(up.t, err)
	ek, kn, err := keys.SecretboxSealFresh(up.rnd, key, up.u.MasterKey)
	require.NoError(up.t, err)
	en, nn, err := keys.SecretboxSealFresh(up.rnd, []byte(name), key)
	require.NoError(up.t, err)
	col, err := up.c.CreateCollection(context.Background(), apiclient.NewCollection{EncryptedKey: ek, KeyDecryptionNonce: kn,
		EncryptedName: en, NameDecryptionNonce: nn, Type: typ})
	require.NoError(up.t, err)
	a, err := catalog.OpenAlbum(col, up.keys())
	require.NoError(up.t, err)
	return a
}

// file is one file made ready for upload.
type file struct {
	plain, key, header, ct, thumb, thumbHeader []byte
	nf                                         apiclient.NewFile
}

func (up *uploader) seal(a *catalog.Album, plain []byte, md map[string]any, pub map[string]any) *file {
	t := up.t
	t.Helper()
	f := &file{plain: plain}
	var err error
	f.key, err = keys.NewKey(up.rnd)
	require.NoError(t, err)
	f.header, err = secretstream.NewHeader(up.rnd)
	require.NoError(t, err)
	f.ct, err = secretstream.Encrypt(f.key, f.header, plain)
	require.NoError(t, err)
	f.thumb, f.thumbHeader, err = secretstream.EncryptBlob(up.rnd, f.key, enteapitest.FakeJPEG("t"))
	require.NoError(t, err)
	h, err := download.HashOf(bytes.NewReader(plain))
	require.NoError(t, err)
	if _, ok := md["hash"]; !ok {
		md["hash"] = keys.EncodeB64(h)
	}
	mdj, err := json.Marshal(md)
	require.NoError(t, err)
	enc, mdh, err := secretstream.EncryptBlob(up.rnd, f.key, mdj)
	require.NoError(t, err)
	ek, kn, err := keys.SecretboxSealFresh(up.rnd, f.key, a.Key)
	require.NoError(t, err)
	f.nf = apiclient.NewFile{CollectionID: a.ID, EncryptedKey: ek, KeyDecryptionNonce: kn,
		Metadata: apiclient.SealedMetadata{EncryptedData: enc, DecryptionHeader: mdh}}
	if pub != nil {
		f.nf.PubMagicMetadata, err = catalog.SealMagic(up.rnd, f.key, 1, pub)
		require.NoError(t, err)
	}
	return f
}

// put uploads data through a checksummed URL; multipart when it has more
// than one part of partLength.
func (up *uploader) put(data []byte, partLength int) string {
	t := up.t
	t.Helper()
	ctx := context.Background()
	if len(data) <= partLength {
		u, err := up.c.UploadURL(ctx, int64(len(data)), md5.Sum(data))
		require.NoError(t, err)
		_, err = up.c.PutUpload(ctx, u.URL, bytes.NewReader(data), int64(len(data)), md5.Sum(data))
		require.NoError(t, err)
		return u.ObjectKey
	}
	var parts [][]byte
	var sums [][md5.Size]byte
	for off := 0; off < len(data); off += partLength {
		parts = append(parts, data[off:min(off+partLength, len(data))])
		sums = append(sums, md5.Sum(parts[len(parts)-1]))
	}
	mp, err := up.c.MultipartUploadURL(ctx, int64(len(data)), int64(partLength), sums)
	require.NoError(t, err)
	var etags []string
	for i, p := range parts {
		etag, err := up.c.PutUpload(ctx, mp.PartURLs[i], bytes.NewReader(p), int64(len(p)), sums[i])
		require.NoError(t, err)
		etags = append(etags, etag)
	}
	require.NoError(t, up.c.CompleteMultipart(ctx, mp.CompleteURL, etags))
	return mp.ObjectKey
}

// body fills in the uploaded objects and returns the bytes to commit.
func (f *file) body(t *testing.T, fileKey, thumbKey string) []byte {
	t.Helper()
	f.nf.File = apiclient.UploadedObject{ObjectKey: fileKey, DecryptionHeader: f.header, Size: int64(len(f.ct))}
	f.nf.Thumbnail = apiclient.UploadedObject{ObjectKey: thumbKey, DecryptionHeader: f.thumbHeader, Size: int64(len(f.thumb))}
	b, err := f.nf.Body()
	require.NoError(t, err)
	return b
}

// upload puts and commits f.
func (up *uploader) upload(f *file) (*apiclient.File, []byte) {
	up.t.Helper()
	body := f.body(up.t, up.put(f.ct, apiclient.PartLength), up.put(f.thumb, apiclient.PartLength))
	got, err := up.c.CreateFile(context.Background(), body)
	require.NoError(up.t, err)
	return got, body
}

// entries lists an album's diff.
func (up *uploader) entries(albumID int64) map[int64]apiclient.File {
	up.t.Helper()
	out := map[int64]apiclient.File{}
	var since int64
	for {
		p, err := up.c.Diff(context.Background(), albumID, since)
		require.NoError(up.t, err)
		for _, f := range p.Diff {
			out[f.ID] = f
		}
		since = apiclient.DiffCursor(since, p.Diff)
		if !p.HasMore {
			return out
		}
	}
}

// raw sends a request as the uploader, for bodies apiclient refuses to send.
func (up *uploader) raw(method, path, body string) (int, string) {
	up.t.Helper()
	req, err := http.NewRequest(method, up.s.URL()+path, strings.NewReader(body))
	require.NoError(up.t, err)
	req.Header.Set("X-Auth-Token", up.u.Token())
	return do(up.t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// storePut PUTs body to url with the given Content-Length and Content-MD5
// ("" for none), bypassing apiclient.
func storePut(t *testing.T, url string, body []byte, length int64, sum string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("PUT", url, bytes.NewReader(body))
	require.NoError(t, err)
	req.ContentLength = length
	if sum != "" {
		req.Header.Set("Content-MD5", sum)
	}
	return do(t, req)
}

func b64md5(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

func code(err error) string {
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// What a restore uploads is what a backup reads: a file, a live photo and
// a multipart file come back through the diff and the download path
// (catalog, Fetcher: size, authentication to FINAL, metadata hash).
func TestUploadsReadBackAsABackupReadsThem(t *testing.T) {
	up := newUploader(t)
	a := up.album("Restored", "album")
	photo := up.seal(a, bytes.Repeat([]byte("jpeg"), 5000), map[string]any{"fileType": 0, "title": "IMG_1.jpg", "creationTime": 1}, map[string]any{"caption": "sea"})
	live := up.seal(a, enteapitest.LivePhoto("HEIC", []byte("still"), "MOV", []byte("moving")),
		map[string]any{"fileType": 2, "title": "IMG_2.HEIC", "creationTime": 2}, nil)
	big := make([]byte, apiclient.PartLength+3<<20)
	_, err := up.rnd.Read(big)
	require.NoError(t, err)
	video := up.seal(a, big, map[string]any{"fileType": 1, "title": "VID_3.mp4", "creationTime": 3}, nil)
	var ids []int64
	for _, f := range []*file{photo, live, video} {
		got, _ := up.upload(f)
		ids = append(ids, got.ID)
	}
	assert.Equal(t, 1, up.s.RequestsWithPrefix("POST /store/"), "one multipart upload, completed once")

	entries := up.entries(a.ID)
	require.Len(t, entries, 3)
	fetcher := &download.Fetcher{Client: up.c, Policy: retry.Policy{MaxAttempts: 1}}
	for i, f := range []*file{photo, live, video} {
		e := entries[ids[i]]
		it, err := catalog.OpenItem(&e, a)
		require.NoError(t, err)
		assert.Equal(t, int64(len(f.ct)), it.Size, "info.fileSize is the ciphertext's")
		hash := it.Meta.Hash
		if catalog.IsLivePhoto(it.Meta) {
			hash = "" // checked per part after unzipping
		}
		p, err := fetcher.Fetch(context.Background(), download.Target{FileID: it.FileID, Key: it.Key, Header: it.Header, Size: it.Size, Hash: hash}, t.TempDir())
		require.NoError(t, err)
		got, err := io.ReadAll(mustOpen(t, p.Path()))
		require.NoError(t, err)
		p.Discard()
		assert.False(t, p.HashMismatch)
		assert.True(t, bytes.Equal(f.plain, got), "file %d", i)
	}
	it, err := catalog.OpenItem(ptr(entries[ids[0]]), a)
	require.NoError(t, err)
	assert.Equal(t, "sea", it.Meta.Caption)
	assert.Equal(t, "IMG_1.jpg", it.Meta.Title)
	assert.Equal(t, up.u.Usage(), int64(len(photo.ct)+len(photo.thumb)+len(live.ct)+len(live.thumb)+len(video.ct)+len(video.thumb)))
}

func ptr[T any](v T) *T { return &v }

// A checksummed URL takes its bytes only, as MinIO does (UP.2).
func TestPinnedURLTakesItsBytesOnly(t *testing.T) {
	up := newUploader(t)
	data := []byte("exactly these bytes")
	other := []byte("other bytes, same l")
	require.Len(t, other, len(data))
	u, err := up.c.UploadURL(context.Background(), int64(len(data)), md5.Sum(data))
	require.NoError(t, err)
	h := md5.Sum(data)
	for _, tc := range []struct {
		name   string
		body   []byte
		sum    string
		status int
		code   string
	}{
		{"no Content-MD5", data, "", 400, "AccessDenied"},
		{"other bytes", other, b64md5(data), 400, "BadDigest"},
		{"other bytes, their MD5", other, b64md5(other), 403, "SignatureDoesNotMatch"},
		{"shorter", data[:5], b64md5(data[:5]), 403, "SignatureDoesNotMatch"},
		{"hex MD5", data, hex.EncodeToString(h[:]), 400, "InvalidDigest"},
		{"right", data, b64md5(data), 200, ""},
		{"right again", data, b64md5(data), 200, ""},
	} {
		st, body := storePut(t, u.URL, tc.body, int64(len(tc.body)), tc.sum)
		assert.Equal(t, tc.status, st, tc.name)
		assert.Contains(t, body, tc.code, tc.name)
	}
	stored, ok := up.s.Object(u.ObjectKey)
	require.True(t, ok)
	assert.Equal(t, data, stored)
}

func TestUploadURLRequests(t *testing.T) {
	up := newUploader(t)
	h := md5.Sum([]byte("x"))
	for name, body := range map[string]string{
		"hex MD5":       fmt.Sprintf(`{"contentLength":1,"contentMD5":%q}`, hex.EncodeToString(h[:])),
		"length 0":      fmt.Sprintf(`{"contentLength":0,"contentMD5":%q}`, b64md5([]byte("x"))),
		"over 10 GiB":   fmt.Sprintf(`{"contentLength":10737418241,"contentMD5":%q}`, b64md5([]byte("x"))),
		"no MD5":        `{"contentLength":1}`,
		"MD5 too short": `{"contentLength":1,"contentMD5":"AAAA"}`,
		"not JSON":      `{`,
	} {
		st, _ := up.raw("POST", "/files/upload-url", body)
		assert.Equal(t, 400, st, name)
	}
	st, _ := up.raw("POST", "/files/upload-url", fmt.Sprintf(`{"contentLength":10737418240,"contentMD5":%q}`, b64md5([]byte("x"))))
	assert.Equal(t, 200, st, "10 GiB is the largest length, and fits a 10 GiB plan with museum's 50 MiB to spare")
}

// A plain URL (GET /files/upload-urls) takes any bytes, also after the
// object is committed: the download then serves the new bytes, museum's
// records keep the old size (UP.2's overwrite hole).
func TestPlainURLOverwritesACommittedObject(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a := up.album("a", "album")
	f := up.seal(a, []byte("original"), map[string]any{"title": "a.jpg"}, nil)
	urls, err := up.c.UploadURLs(ctx, 2)
	require.NoError(t, err)
	for i, data := range [][]byte{f.ct, f.thumb} {
		st, _ := storePut(t, urls[i].URL, data, int64(len(data)), "")
		require.Equal(t, 200, st)
	}
	got, err := up.c.CreateFile(ctx, f.body(t, urls[0].ObjectKey, urls[1].ObjectKey))
	require.NoError(t, err)
	st, _ := storePut(t, urls[0].URL, []byte("replaced"), 8, "")
	require.Equal(t, 200, st)
	o, err := up.c.DownloadFile(ctx, got.ID)
	require.NoError(t, err)
	b, err := io.ReadAll(o.Body)
	o.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "replaced", string(b))
	assert.Equal(t, int64(len(f.ct)), up.entries(a.ID)[got.ID].Info.FileSize)
}

func TestMultipartRules(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	part1 := bytes.Repeat([]byte{1}, 5<<20)
	part2 := []byte("the last part")
	size := int64(len(part1) + len(part2))
	sums := [][md5.Size]byte{md5.Sum(part1), md5.Sum(part2)}
	sum64 := func(b []byte) string { return b64md5(b) }
	for name, body := range map[string]string{
		"parts miscounted": fmt.Sprintf(`{"contentLength":%d,"partLength":%d,"partMd5s":[%q]}`, size, len(part1), sum64(part1)),
		"parts too small":  fmt.Sprintf(`{"contentLength":2000,"partLength":1000,"partMd5s":[%q,%q]}`, sum64(part2), sum64(part2)),
		"no parts":         `{"contentLength":1000,"partLength":1000,"partMd5s":[]}`,
		"hex part MD5":     `{"contentLength":1000,"partLength":1000,"partMd5s":["00112233445566778899aabbccddeeff"]}`,
	} {
		st, _ := up.raw("POST", "/files/multipart-upload-url", body)
		assert.Equal(t, 400, st, name)
	}
	st, _ := up.raw("POST", "/files/multipart-upload-url", fmt.Sprintf(`{"contentLength":13,"partLength":5242880,"partMd5s":[%q]}`, sum64(part2)))
	assert.Equal(t, 200, st, "one small part is fine")
	for _, tc := range []struct {
		size, partLength int64
		status           int
	}{
		{1000, 1000, 200},
		{0, 1000, 400},
		{10<<30 + 1, 5 << 30, 400},
		{10 << 30, 5 << 30, 200},
		{6 << 30, 5<<30 + 1, 400},
		{1000, 0, 400},
		{11 << 20, 5 << 20, 200},
		{11 << 20, 5<<20 - 1, 400},
	} {
		parts := max((tc.size+max(tc.partLength, 1)-1)/max(tc.partLength, 1), 1)
		md5s := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%q,", sum64(part2)), int(parts)), ",")
		st, _ := up.raw("POST", "/files/multipart-upload-url", fmt.Sprintf(`{"contentLength":%d,"partLength":%d,"partMd5s":[%s]}`, tc.size, tc.partLength, md5s))
		assert.Equal(t, tc.status, st, "%d bytes in parts of %d", tc.size, tc.partLength)
	}

	mp, err := up.c.MultipartUploadURL(ctx, size, int64(len(part1)), sums)
	require.NoError(t, err)
	st, body := storePut(t, mp.PartURLs[1], part2, int64(len(part2)), "")
	assert.Equal(t, 400, st, "a part without Content-MD5")
	assert.Contains(t, body, "AccessDenied")
	st, _ = storePut(t, mp.PartURLs[1], part2[:5], 5, sum64(part2[:5]))
	assert.Equal(t, 403, st, "a part of another length")
	st, _ = storePut(t, mp.PartURLs[1], bytes.Repeat([]byte{9}, len(part2)), int64(len(part2)), sum64(part2))
	assert.Equal(t, 400, st, "a part of other bytes")
	for _, n := range []string{"partNumber=0", "partNumber=3"} {
		st, _ = storePut(t, strings.Replace(mp.PartURLs[1], "partNumber=2", n, 1), part2, int64(len(part2)), sum64(part2))
		assert.Equal(t, 403, st, "a part number no URL was signed for: %s", n)
	}
	var etags []string
	for i, p := range [][]byte{part1, part2} {
		etag, err := up.c.PutUpload(ctx, mp.PartURLs[i], bytes.NewReader(p), int64(len(p)), sums[i])
		require.NoError(t, err)
		etags = append(etags, etag)
	}
	complete := func(parts ...string) (int, string) {
		var b strings.Builder
		b.WriteString("<CompleteMultipartUpload>")
		for i := 0; i < len(parts); i += 2 {
			fmt.Fprintf(&b, "<Part><PartNumber>%s</PartNumber><ETag>%s</ETag></Part>", parts[i], parts[i+1])
		}
		b.WriteString("</CompleteMultipartUpload>")
		req, err := http.NewRequest("POST", mp.CompleteURL, strings.NewReader(b.String()))
		require.NoError(t, err)
		return do(t, req)
	}
	for _, tc := range []struct {
		name  string
		parts []string
		code  string
	}{
		{"no parts", nil, "InvalidRequest"},
		{"wrong ETag", []string{"1", etags[0], "2", `"00000000000000000000000000000000"`}, "InvalidPart"},
		{"out of order", []string{"2", etags[1], "1", etags[0]}, "InvalidPartOrder"},
		{"a part never uploaded", []string{"1", etags[0], "3", etags[1]}, "InvalidPart"},
	} {
		st, body := complete(tc.parts...)
		assert.Equal(t, 400, st, tc.name)
		assert.Contains(t, body, tc.code, tc.name)
	}

	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x"}, nil)
	f.ct = append(append([]byte{}, part1...), part2...)
	body1 := f.body(t, mp.ObjectKey, up.put(f.thumb, apiclient.PartLength))
	_, err = up.c.CreateFile(ctx, body1)
	assert.Equal(t, 503, status(err), "POST /files before completion")
	assert.Equal(t, "OBJECT_SIZE_FETCH_FAILED", code(err))

	pending := up.s.PendingUploads()
	require.NoError(t, up.c.CompleteMultipart(ctx, mp.CompleteURL, etags))
	assert.Equal(t, pending-1, up.s.PendingUploads())
	assert.Equal(t, 404, status(up.c.CompleteMultipart(ctx, mp.CompleteURL, etags)), "completion is not repeatable")
	_, err = up.c.PutUpload(ctx, mp.PartURLs[1], bytes.NewReader(part2), int64(len(part2)), sums[1])
	assert.Equal(t, 404, status(err), "no parts after completion")
	_, err = up.c.CreateFile(ctx, body1)
	require.NoError(t, err)

	// Completing with fewer parts than minted makes a shorter object, which
	// POST /files then refuses by its size.
	mp2, err := up.c.MultipartUploadURL(ctx, size, int64(len(part1)), sums)
	require.NoError(t, err)
	e1, err := up.c.PutUpload(ctx, mp2.PartURLs[0], bytes.NewReader(part1), int64(len(part1)), sums[0])
	require.NoError(t, err)
	require.NoError(t, up.c.CompleteMultipart(ctx, mp2.CompleteURL, []string{e1}))
	g := up.seal(a, []byte("y"), map[string]any{"title": "y"}, nil)
	g.ct = f.ct
	_, err = up.c.CreateFile(ctx, g.body(t, mp2.ObjectKey, up.put(g.thumb, apiclient.PartLength)))
	assert.Equal(t, 400, status(err))
}

// POST /files checks in museum's order (UP.4) and no crypto at all.
func TestCommitChecks(t *testing.T) {
	up := newUploader(t)
	other := uploaderOn(t, up.s, "other@example.org")
	a := up.album("a", "album")
	theirs := other.album("theirs", "album")
	gone := up.album("gone", "album")
	f := up.seal(a, []byte("content"), map[string]any{"title": "c.jpg"}, nil)
	fk, tk := up.put(f.ct, apiclient.PartLength), up.put(f.thumb, apiclient.PartLength)
	good := f.body(t, fk, tk)
	var m map[string]any
	send := func(change func(m map[string]any)) (int, string) {
		m = nil
		require.NoError(t, json.Unmarshal(good, &m))
		change(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return up.raw("POST", "/files", string(b))
	}
	obj := func(name string) map[string]any { return m[name].(map[string]any) }
	deleteAlbum(t, up.s, gone.ID)
	for _, tc := range []struct {
		name   string
		change func(m map[string]any)
		status int
		code   string
	}{
		{"another user's key prefix", func(m map[string]any) { obj("file")["objectKey"] = fmt.Sprintf("%d/x", other.u.ID) }, 400, ""},
		{"one object twice", func(m map[string]any) { obj("thumbnail")["objectKey"] = fk }, 400, ""},
		{"no file key", func(m map[string]any) { delete(m, "encryptedKey") }, 400, ""},
		{"no nonce", func(m map[string]any) { m["keyDecryptionNonce"] = "" }, 400, ""},
		{"no file header", func(m map[string]any) { delete(obj("file"), "decryptionHeader") }, 400, ""},
		{"no metadata header", func(m map[string]any) { delete(obj("metadata"), "decryptionHeader") }, 400, ""},
		{"magic count 0", func(m map[string]any) {
			m["pubMagicMetadata"] = map[string]any{"version": 1, "count": 0, "data": "AAAA", "header": "AAAA"}
		}, 400, ""},
		{"an id: an update", func(m map[string]any) { m["id"] = 5 }, 400, ""},
		{"no album", func(m map[string]any) { m["collectionID"] = 424242 }, 404, ""},
		{"another user's album", func(m map[string]any) { m["collectionID"] = theirs.ID }, 403, ""},
		{"deleted album", func(m map[string]any) { m["collectionID"] = gone.ID }, 404, "COLLECTION_DELETED"},
		{"album checked before objects", func(m map[string]any) {
			m["collectionID"] = 424242
			obj("file")["objectKey"] = fmt.Sprintf("%d/never-uploaded", up.u.ID)
		}, 404, ""},
		{"no object", func(m map[string]any) { obj("file")["objectKey"] = fmt.Sprintf("%d/never-uploaded", up.u.ID) }, 503, "OBJECT_SIZE_FETCH_FAILED"},
		{"file size", func(m map[string]any) { obj("file")["size"] = 17 }, 400, ""},
		{"thumbnail size", func(m map[string]any) { obj("thumbnail")["size"] = 17 }, 400, ""},
	} {
		st, body := send(tc.change)
		assert.Equal(t, tc.status, st, tc.name)
		assert.Contains(t, body, tc.code, tc.name)
	}
	assert.Empty(t, up.entries(a.ID), "nothing refused was stored")

	st, _ := send(func(m map[string]any) {
		m["encryptedKey"] = "AAAA"
		delete(obj("metadata"), "encryptedData")
		obj("file")["size"] = 0 // not checked, filled from the store
		m["magicMetadata"] = map[string]any{"version": 7, "count": 9, "data": "junk", "header": "junk"}
	})
	assert.Equal(t, 200, st, "junk is stored: museum checks no crypto")
	require.Len(t, up.entries(a.ID), 1)
	for _, e := range up.entries(a.ID) {
		assert.Equal(t, apiclient.B64{0, 0, 0}, e.EncryptedKey, "the junk key is kept and listed")
		assert.Equal(t, int64(len(f.ct)), e.Info.FileSize)
	}
}

// deleteAlbum deletes an album the fake made through the API.
func deleteAlbum(t *testing.T, s *enteapitest.Server, id int64) {
	t.Helper()
	a := s.Album(id)
	require.NotNil(t, a)
	a.Delete()
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.NewReader(b)
}

// Repeats and duplicates as museum has them (UP.5).
func TestCommitRepeats(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a, b := up.album("a", "album"), up.album("b", "album")
	f := up.seal(a, []byte("content"), map[string]any{"title": "c.jpg"}, nil)
	first, body := up.upload(f)
	files := up.s.RequestsWithPrefix("PUT /store/")

	again, err := up.c.CreateFile(ctx, body)
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID, "the same body answers the same file")
	assert.Greater(t, again.UpdationTime, first.UpdationTime, "with a fresh clock value")
	entries := up.entries(a.ID)
	require.Len(t, entries, 1)
	assert.Equal(t, first.UpdationTime, entries[first.ID].UpdationTime, "and nothing changed")

	var m map[string]any
	change := func(edit func(m map[string]any)) []byte {
		m = nil
		require.NoError(t, json.Unmarshal(body, &m))
		edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	otherMeta := change(func(m map[string]any) {
		m["metadata"].(map[string]any)["decryptionHeader"] = keys.EncodeB64(bytes.Repeat([]byte{9}, 24))
	})
	_, err = up.c.CreateFile(ctx, otherMeta)
	assert.Equal(t, 400, status(err), "the same objects with other metadata")

	for name, body := range map[string][]byte{
		"another album":    change(func(m map[string]any) { m["collectionID"] = b.ID }),
		"another file key": change(func(m map[string]any) { m["encryptedKey"] = keys.EncodeB64(bytes.Repeat([]byte{8}, 48)) }),
	} {
		got, err := up.c.CreateFile(ctx, body)
		require.NoError(t, err, name)
		assert.Equal(t, first.ID, got.ID, name)
	}
	assert.Empty(t, up.entries(b.ID), "a repeat into another album adds nothing there")
	assert.Equal(t, f.nf.EncryptedKey, up.entries(a.ID)[first.ID].EncryptedKey, "nor changes the stored key")

	// New objects for the same plaintext make a second file.
	g := up.seal(a, f.plain, map[string]any{"title": "c.jpg"}, nil)
	second, _ := up.upload(g)
	assert.NotEqual(t, first.ID, second.ID)
	assert.Equal(t, files+2, up.s.RequestsWithPrefix("PUT /store/"), "the second file is uploaded anew")
}

// The owner reads a file's private magic metadata in the diff; a sharee
// never does (UP.3).
func TestPrivateMagicMetadataAtCommit(t *testing.T) {
	up := newUploader(t)
	sam := uploaderOn(t, up.s, "sam@example.org")
	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x.jpg"}, map[string]any{"caption": "hi"})
	var err error
	f.nf.MagicMetadata, err = catalog.SealMagic(up.rnd, f.key, 1, map[string]any{"visibility": 1})
	require.NoError(t, err)
	got, _ := up.upload(f)
	e := up.entries(a.ID)[got.ID]
	require.NotNil(t, e.MagicMetadata)
	plain, err := secretstream.OpenBlob(f.key, e.MagicMetadata.Header, e.MagicMetadata.Data)
	require.NoError(t, err)
	assert.JSONEq(t, `{"visibility":1}`, string(plain))
	require.NotNil(t, e.PubMagicMetadata)

	up.s.Album(a.ID).ShareWith(sam.u, "VIEWER")
	theirs := sam.entries(a.ID)[got.ID]
	assert.Nil(t, theirs.MagicMetadata, "private to the owner")
	assert.NotNil(t, theirs.PubMagicMetadata)
	shared := sharedAlbum(t, sam, a.ID)
	assert.Equal(t, "a", shared.Name, "the name sent, sealed under the album's key, for the sharee too")
	it, err := catalog.OpenItem(&theirs, shared)
	require.NoError(t, err, "the sharee opens the file with the album key sealed to them")
	assert.Equal(t, "x.jpg", it.Meta.Title)
}

func sharedAlbum(t *testing.T, up *uploader, id int64) *catalog.Album {
	t.Helper()
	col, err := up.c.Collection(context.Background(), id)
	require.NoError(t, err)
	a, err := catalog.OpenAlbum(col, up.keys())
	require.NoError(t, err)
	return a
}

// POST /collections as museum takes it (UP.6).
func TestCreateCollectionRules(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	k48, n24 := keys.EncodeB64(make([]byte, 48)), keys.EncodeB64(make([]byte, 24))
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"short key", fmt.Sprintf(`{"encryptedKey":"AAAA","keyDecryptionNonce":%q,"type":"album"}`, n24), 500},
		{"short nonce", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":"AAAA","type":"album"}`, k48), 500},
		{"unknown type", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"shelf"}`, k48, n24), 500},
		{"no type", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q}`, k48, n24), 400},
		{"no key", fmt.Sprintf(`{"keyDecryptionNonce":%q,"type":"album"}`, n24), 400},
		{"magic count 0", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"album","magicMetadata":{"version":1,"count":0,"data":"AAAA","header":"AAAA"}}`, k48, n24), 400},
		{"no name, junk key", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"album"}`, k48, n24), 200},
		{"legacy type", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"CollectionType.album"}`, k48, n24), 200},
	} {
		st, _ := up.raw("POST", "/collections", tc.body)
		assert.Equal(t, tc.status, st, tc.name)
	}

	hidden := up.albumWithMagic(".hidden", map[string]any{"subType": 1, "visibility": 2})
	assert.Equal(t, 2, hidden.Visibility, "the magic metadata sent comes back")
	assert.Equal(t, ".hidden", hidden.Name)
	fav := up.album("Favorites", "favorites")
	again := up.album("Favourites, again", "favorites")
	assert.Equal(t, fav.ID, again.ID, "a second favorites is the first")
	assert.Equal(t, fav.Key, again.Key, "with its key, not the one just sent")
	assert.Equal(t, "Favorites", again.Name)
	cs, err := up.c.Collections(ctx, 0)
	require.NoError(t, err)
	assert.Len(t, cs, 4, "two albums by raw requests, the hidden one, one favorites")

	u2 := up.album("Uncategorized", "uncategorized")
	up.s.Album(u2.ID).Delete()
	st, _ := up.raw("POST", "/collections", fmt.Sprintf(`{"encryptedKey":%q,"keyDecryptionNonce":%q,"type":"uncategorized"}`, k48, n24))
	assert.Equal(t, 500, st, "the singleton was deleted")
}

func (up *uploader) albumWithMagic(name string, magic map[string]any) *catalog.Album {
	up.t.Helper()
	key, err := keys.NewKey(up.rnd)
	require.NoError(up.t, err)
	ek, kn, err := keys.SecretboxSealFresh(up.rnd, key, up.u.MasterKey)
	require.NoError(up.t, err)
	en, nn, err := keys.SecretboxSealFresh(up.rnd, []byte(name), key)
	require.NoError(up.t, err)
	mm, err := catalog.SealMagic(up.rnd, key, 1, magic)
	require.NoError(up.t, err)
	col, err := up.c.CreateCollection(context.Background(), apiclient.NewCollection{EncryptedKey: ek, KeyDecryptionNonce: kn,
		EncryptedName: en, NameDecryptionNonce: nn, Type: "album", MagicMetadata: mm})
	require.NoError(up.t, err)
	cs, err := up.c.Collections(context.Background(), 0)
	require.NoError(up.t, err)
	for i := range cs {
		if cs[i].ID == col.ID {
			a, err := catalog.OpenAlbum(&cs[i], up.keys())
			require.NoError(up.t, err)
			return a
		}
	}
	up.t.Fatal("the album is not listed")
	return nil
}

// POST /collections/add-files as museum takes it (UP.7).
func TestAddFilesRules(t *testing.T) {
	up := newUploader(t)
	other := uploaderOn(t, up.s, "other@example.org")
	ctx := context.Background()
	a, b := up.album("a", "album"), up.album("b", "album")
	f := up.seal(a, []byte("one"), map[string]any{"title": "1.jpg"}, nil)
	g := up.seal(a, []byte("two"), map[string]any{"title": "2.jpg"}, nil)
	fe, _ := up.upload(f)
	ge, _ := up.upload(g)
	item := func(id int64, key []byte, under *catalog.Album) apiclient.CollectionFileItem {
		ek, kn, err := keys.SecretboxSealFresh(up.rnd, key, under.Key)
		require.NoError(t, err)
		return apiclient.CollectionFileItem{ID: id, EncryptedKey: ek, KeyDecryptionNonce: kn}
	}
	first := item(fe.ID, f.key, b)
	require.NoError(t, up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{first}))
	e1 := up.entries(b.ID)[fe.ID]
	assert.Equal(t, first.EncryptedKey, e1.EncryptedKey)
	it, err := catalog.OpenItem(&e1, b)
	require.NoError(t, err)
	assert.Equal(t, "1.jpg", it.Meta.Title)

	require.NoError(t, up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(fe.ID, f.key, b)}))
	e2 := up.entries(b.ID)[fe.ID]
	assert.Equal(t, first.EncryptedKey, e2.EncryptedKey, "a file already there keeps its key")
	assert.Greater(t, e2.UpdationTime, e1.UpdationTime, "and shows in the diff again")
	col, err := up.c.Collection(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, e2.UpdationTime, col.UpdationTime)

	up.s.Album(b.ID).Remove(up.s.File(fe.ID))
	require.NoError(t, up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(fe.ID, f.key, b)}))
	e3 := up.entries(b.ID)[fe.ID]
	assert.False(t, e3.IsDeleted, "a removed entry comes back")
	assert.Equal(t, first.EncryptedKey, e3.EncryptedKey, "with its old key")

	twice := item(ge.ID, g.key, b)
	assert.Equal(t, 400, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{twice, twice})), "the same id twice")
	assert.Equal(t, 400, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(424242, g.key, b)})), "no such file")
	assert.Equal(t, 404, status(up.c.AddFiles(ctx, 424242, []apiclient.CollectionFileItem{twice})), "no such album")
	theirs := other.seal(other.album("theirs", "album"), []byte("x"), map[string]any{"title": "x"}, nil)
	te, _ := other.upload(theirs)
	assert.Equal(t, 403, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(te.ID, g.key, b)})), "another user's file")
	assert.Equal(t, 403, status(up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{twice, item(te.ID, g.key, b)})), "mixed owners")
	theirAlbum := other.album("theirs 2", "album")
	assert.Equal(t, 404, status(up.c.AddFiles(ctx, theirAlbum.ID, []apiclient.CollectionFileItem{twice})), "an album not shared")
	up.s.Album(theirAlbum.ID).ShareWith(up.u, "VIEWER")
	assert.Equal(t, 403, status(up.c.AddFiles(ctx, theirAlbum.ID, []apiclient.CollectionFileItem{twice})), "a viewer adds nothing")
	up.s.Album(theirAlbum.ID).ShareWith(up.u, "COLLABORATOR")
	require.NoError(t, up.c.AddFiles(ctx, theirAlbum.ID, []apiclient.CollectionFileItem{item(ge.ID, g.key, sharedAlbum(t, up, theirAlbum.ID))}),
		"a collaborator adds own files")

	up.s.File(ge.ID).Trash()
	err = up.c.AddFiles(ctx, b.ID, []apiclient.CollectionFileItem{item(ge.ID, g.key, b)})
	assert.Equal(t, 409, status(err))
	assert.Equal(t, "FILE_IN_TRASH", code(err))

	junk := apiclient.CollectionFileItem{ID: fe.ID, EncryptedKey: []byte{1, 2, 3}, KeyDecryptionNonce: []byte{4}}
	c := up.album("c", "album")
	require.NoError(t, up.c.AddFiles(ctx, c.ID, []apiclient.CollectionFileItem{junk}), "no crypto is checked")
	assert.Equal(t, apiclient.B64{1, 2, 3}, up.entries(c.ID)[fe.ID].EncryptedKey)

	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf(`{"id":%d,"encryptedKey":"AAAA","keyDecryptionNonce":"AAAA"}`, i+1)
	}
	st, _ := up.raw("POST", "/collections/add-files", fmt.Sprintf(`{"collectionID":%d,"files":[%s]}`, b.ID, strings.Join(many, ",")))
	assert.Equal(t, 413, st)
	st, _ = up.raw("POST", "/collections/add-files", fmt.Sprintf(`{"collectionID":%d,"files":[%s]}`, b.ID, strings.Join(many[:1000], ",")))
	assert.Equal(t, 400, st, "1000 files are a batch (of files that are not there)")
	st, _ = up.raw("POST", "/collections/add-files", fmt.Sprintf(`{"collectionID":%d,"files":[{"id":%d}]}`, b.ID, fe.ID))
	assert.Equal(t, 400, st, "a file without its key")
}

func TestGetCollection(t *testing.T) {
	up := newUploader(t)
	sam := uploaderOn(t, up.s, "sam@example.org")
	ctx := context.Background()
	a := up.album("a", "album")
	col, err := up.c.Collection(ctx, a.ID)
	require.NoError(t, err)
	opened, err := catalog.OpenAlbum(col, up.keys())
	require.NoError(t, err)
	assert.Equal(t, "a", opened.Name)
	assert.Equal(t, a.Key, opened.Key)
	_, err = sam.c.Collection(ctx, a.ID)
	assert.Equal(t, 404, status(err), "a stranger")
	up.s.Album(a.ID).ShareWith(sam.u, "VIEWER")
	_, err = sam.c.Collection(ctx, a.ID)
	require.NoError(t, err, "a sharee")
	up.s.Album(a.ID).Delete()
	col, err = up.c.Collection(ctx, a.ID)
	require.NoError(t, err)
	assert.True(t, col.IsDeleted, "deleted albums are answered")
	st, _ := up.raw("GET", "/collections/abc", "")
	assert.Equal(t, 404, st)
}

// Usage counts the ciphertext of every file, trashed ones too (UP.10).
func TestUsageCountsTrash(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a := up.album("a", "album")
	fixture := up.s.Album(a.ID).AddFile(enteapitest.FileSpec{Title: "f.jpg", Data: make([]byte, 100)})
	f := up.seal(a, make([]byte, 1000), map[string]any{"title": "x.jpg"}, nil)
	got, _ := up.upload(f)
	want := secretstream.CiphertextSize(100) + up.s.File(fixture.ID).InfoThumbnailSize() + int64(len(f.ct)+len(f.thumb))
	d, err := up.c.UserDetails(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, d.Usage)
	up.s.File(got.ID).Trash()
	d, err = up.c.UserDetails(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, d.Usage, "trash still counts")
	up.u.ExpirePlan()
	_, err = up.c.UserDetails(ctx)
	require.NoError(t, err, "an account whose plan is over still reads its details")
}

// The plan is checked as museum's CanUploadFile does: 402 once it is over
// without a bonus, 426 when full, with 50 MiB of slack for a known size
// and a verdict that lags one request (UP.10).
func TestPlanChecks(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a := up.album("a", "album")
	f := up.seal(a, make([]byte, 1000), map[string]any{"title": "x.jpg"}, nil)
	up.upload(f)
	used := up.u.Usage()

	small := int64(1 << 20)
	up.u.SetStorage(used)
	_, err := up.c.UploadURL(ctx, small, [16]byte{})
	require.NoError(t, err, "a known size may go 50 MiB over")
	_, err = up.c.UploadURL(ctx, 60<<20, [16]byte{})
	require.NoError(t, err, "the last check passed: one request passes unchecked")
	_, err = up.c.UploadURL(ctx, 60<<20, [16]byte{})
	assert.Equal(t, 426, status(err), "the check that ran behind it failed")
	_, err = up.c.UploadURL(ctx, small, [16]byte{})
	require.NoError(t, err, "checked again, and within the slack")
	_, err = up.c.UploadURL(ctx, 200<<20, [16]byte{})
	assert.Equal(t, 426, status(err), "100 MiB or more is always checked")

	up.u.SetStorage(used)
	_, err = up.c.UploadURLs(ctx, 1)
	require.NoError(t, err, "checked, a full account may still mint")
	_, err = up.c.UploadURL(ctx, 100<<20, [16]byte{})
	assert.Equal(t, 426, status(err), "100 MiB is always checked")

	up.u.SetStorage(used - 1)
	_, err = up.c.UploadURL(ctx, small, [16]byte{})
	require.NoError(t, err, "checked: within the slack")
	_, err = up.c.UploadURLs(ctx, 1)
	require.NoError(t, err, "lagging")
	_, err = up.c.UploadURLs(ctx, 1)
	assert.Equal(t, 426, status(err), "without a size, usage alone is over")
	_, err = up.c.MultipartUploadURL(ctx, 6<<20, 5<<20, make([][16]byte, 2))
	assert.Equal(t, 426, status(err), "multipart minting knows no size either")
	up.u.SetStorageBonus(10)
	_, err = up.c.UploadURLs(ctx, 1)
	require.NoError(t, err, "the bonus counts")

	up.u.ExpirePlan()
	up.u.SetStorageBonus(0)
	_, err = up.c.UploadURLs(ctx, 1)
	require.NoError(t, err, "lagging")
	_, err = up.c.UploadURLs(ctx, 1)
	assert.Equal(t, 402, status(err))
	g := up.seal(a, make([]byte, 10), map[string]any{"title": "y.jpg"}, nil)
	body := g.body(t, up.putPlain(g.ct), up.putPlain(g.thumb))
	_, err = up.c.CreateFile(ctx, body)
	assert.Equal(t, 402, status(err), "POST /files too")
	up.u.SetStorageBonus(used + 1000)
	_, err = up.c.CreateFile(ctx, body)
	require.NoError(t, err, "a bonus outlives the plan")
}

// putPlain PUTs data through a plain URL, which minting refuses no less.
func (up *uploader) putPlain(data []byte) string {
	up.t.Helper()
	key := fmt.Sprintf("%d/plain-%d", up.u.ID, len(data))
	st, _ := storePut(up.t, up.s.Store.URL+"/store/"+key, data, int64(len(data)), "")
	require.Equal(up.t, 200, st)
	return key
}

// 500 requests a minute per user and route on the upload-URL routes, then
// museum's 429 with no Retry-After (UP.2); the minute is the server's clock.
func TestUploadURLRateLimit(t *testing.T) {
	up := newUploader(t)
	other := uploaderOn(t, up.s, "other@example.org")
	ctx := context.Background()
	for i := 0; i < enteapitest.UploadURLLimit; i++ {
		_, err := up.c.UploadURL(ctx, 1, [16]byte{})
		require.NoError(t, err, "request %d", i+1)
	}
	_, err := up.c.UploadURL(ctx, 1, [16]byte{})
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 429, ae.Status)
	assert.Empty(t, ae.RetryAfter)
	assert.Equal(t, "Rate limit breached, try later", ae.Message)
	_, err = up.c.UploadURLs(ctx, 1)
	require.NoError(t, err, "another route has its own count")
	_, err = other.c.UploadURL(ctx, 1, [16]byte{})
	require.NoError(t, err, "another user too")
	up.s.Advance(59 * time.Second)
	_, err = up.c.UploadURL(ctx, 1, [16]byte{})
	assert.Equal(t, 429, status(err))
	up.s.Advance(time.Second)
	_, err = up.c.UploadURL(ctx, 1, [16]byte{})
	require.NoError(t, err, "a new minute")
}

// Faults cut, lose or refuse the store's answers without the test knowing
// the object keys.
func TestUploadFaults(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("x"), 100)
	sum := md5.Sum(data)

	u, err := up.c.UploadURL(ctx, 100, sum)
	require.NoError(t, err)
	up.s.InjectUpload(enteapitest.StepPut, enteapitest.Status(503))
	_, err = up.c.PutUpload(ctx, u.URL, bytes.NewReader(data), 100, sum)
	assert.Equal(t, 503, status(err))
	_, stored := up.s.Object(u.ObjectKey)
	assert.False(t, stored, "refused, not applied")
	up.s.InjectUpload(enteapitest.StepPut, enteapitest.LoseResponse())
	_, err = up.c.PutUpload(ctx, u.URL, bytes.NewReader(data), 100, sum)
	require.Error(t, err)
	got, stored := up.s.Object(u.ObjectKey)
	assert.True(t, stored, "applied, answer lost")
	assert.Equal(t, data, got)

	part := bytes.Repeat([]byte{3}, 5<<20)
	psum := md5.Sum(part)
	mp, err := up.c.MultipartUploadURL(ctx, int64(len(part)), int64(len(part)), [][md5.Size]byte{psum})
	require.NoError(t, err)
	up.s.InjectUpload(enteapitest.StepPart, enteapitest.Status(500))
	_, err = up.c.PutUpload(ctx, mp.PartURLs[0], bytes.NewReader(part), int64(len(part)), psum)
	assert.Equal(t, 500, status(err))
	etag, err := up.c.PutUpload(ctx, mp.PartURLs[0], bytes.NewReader(part), int64(len(part)), psum)
	require.NoError(t, err)
	up.s.InjectUpload(enteapitest.StepComplete, enteapitest.CutAfter(20))
	err = up.c.CompleteMultipart(ctx, mp.CompleteURL, []string{etag})
	require.Error(t, err, "the answer was cut")
	assert.Equal(t, 404, status(up.c.CompleteMultipart(ctx, mp.CompleteURL, []string{etag})), "but the completion happened")
	stored2, ok := up.s.Object(mp.ObjectKey)
	require.True(t, ok)
	assert.True(t, bytes.Equal(part, stored2))

	a := up.album("a", "album")
	f := up.seal(a, []byte("lost"), map[string]any{"title": "l.jpg"}, nil)
	body := f.body(t, up.put(f.ct, apiclient.PartLength), up.put(f.thumb, apiclient.PartLength))
	up.s.Inject("POST /files", enteapitest.LoseResponse())
	_, err = up.c.CreateFile(ctx, body)
	require.Error(t, err)
	assert.Equal(t, retry.Transient, retry.Classify(err))
	got2, err := up.c.CreateFile(ctx, body)
	require.NoError(t, err, "the stored body sent again")
	assert.Len(t, up.entries(a.ID), 1, "one file, committed by the lost request")
	assert.Contains(t, up.entries(a.ID), got2.ID)
}

// POST /files checks the plan with the file and its thumbnail (UP.10).
func TestCommitChecksThePlanWithBothObjects(t *testing.T) {
	up := newUploader(t)
	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x.jpg"}, nil)
	up.u.SetStorage(0)
	file := fmt.Sprintf("%d/file", up.u.ID)
	up.s.PlaceObject(file, 50<<20-int64(len(f.thumb))+1)
	f.nf.File = apiclient.UploadedObject{ObjectKey: file, DecryptionHeader: f.header, Size: 50<<20 - int64(len(f.thumb)) + 1}
	f.nf.Thumbnail = apiclient.UploadedObject{ObjectKey: up.putPlain(f.thumb), DecryptionHeader: f.thumbHeader, Size: int64(len(f.thumb))}
	body, err := f.nf.Body()
	require.NoError(t, err)
	_, err = up.c.CreateFile(context.Background(), body)
	assert.Equal(t, 426, status(err), "one byte over the 50 MiB of slack, with the thumbnail")
}

// The 10 GiB limit is on the stored object, after the store was asked and
// before sizes and the plan are (UP.4).
func TestCommitSizeLimitAndOrder(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	a := up.album("a", "album")
	f := up.seal(a, []byte("x"), map[string]any{"title": "x.jpg"}, nil)
	huge := fmt.Sprintf("%d/huge", up.u.ID)
	up.s.PlaceObject(huge, enteapitest.MaxFileSize+1)
	up.u.SetStorage(0) // the plan would refuse it too, later
	thumb := up.put(f.thumb, apiclient.PartLength)
	_, err := up.c.CreateFile(ctx, f.body(t, huge, thumb))
	assert.Equal(t, 413, status(err), "over 10 GiB, before the size sent is compared")

	f.ct = make([]byte, 100)
	_, err = up.c.CreateFile(ctx, f.body(t, fmt.Sprintf("%d/never", up.u.ID), thumb))
	assert.Equal(t, 503, status(err), "a missing object before its size")
	limit := fmt.Sprintf("%d/limit", up.u.ID)
	up.s.PlaceObject(limit, enteapitest.MaxFileSize)
	_, err = up.c.CreateFile(ctx, f.body(t, limit, thumb))
	assert.Equal(t, 400, status(err), "10 GiB exactly passes the limit; the size sent is compared before the plan")
	f.nf.File = apiclient.UploadedObject{ObjectKey: limit, DecryptionHeader: f.header, Size: enteapitest.MaxFileSize}
	body, err := f.nf.Body()
	require.NoError(t, err)
	_, err = up.c.CreateFile(ctx, body)
	assert.Equal(t, 426, status(err), "then the plan")
}
