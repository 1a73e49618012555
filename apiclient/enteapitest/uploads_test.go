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
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
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
