package apiclient_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

func TestPartSums(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 25) // 250 bytes
	sums, err := apiclient.PartSums(bytes.NewReader(data), 250, 100)
	require.NoError(t, err)
	assert.Equal(t, [][md5.Size]byte{md5.Sum(data[:100]), md5.Sum(data[100:200]), md5.Sum(data[200:])}, sums)
	sums, err = apiclient.PartSums(bytes.NewReader(data), 250, 250)
	require.NoError(t, err)
	assert.Equal(t, [][md5.Size]byte{md5.Sum(data)}, sums, "one part: the whole object's sum")
	sums, err = apiclient.PartSums(bytes.NewReader(data), 200, 100)
	require.NoError(t, err)
	assert.Len(t, sums, 2, "exactly size bytes are read")
	_, err = apiclient.PartSums(bytes.NewReader(data), 300, 100)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "part 3, after 50 bytes")
	_, err = apiclient.PartSums(bytes.NewReader(data[:200]), 250, 100)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a whole part missing")
	_, err = apiclient.PartSums(bytes.NewReader(data), 250, 0)
	assert.Error(t, err)
	_, err = apiclient.PartSums(bytes.NewReader(data), 0, 100)
	assert.Error(t, err)
}

func TestPartLengthIsFiveChunks(t *testing.T) {
	assert.Equal(t, 5*(secretstream.ChunkSize+secretstream.Overhead), apiclient.PartLength)
	assert.Equal(t, 20971605, apiclient.PartLength, "UP.2")
}

func TestMultipartUploadCommits(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	ctx := context.Background()
	rnd := &counting{}
	albumID, albumKey := newAlbum(t, c, u, rnd)
	plain := bytes.Repeat([]byte{7}, 5<<20+1000) // two chunks; parts of 5 MiB and the rest
	f := seal(t, rnd, albumID, albumKey, plain)
	const partLength = 5 << 20
	parts := [][]byte{f.ct[:partLength], f.ct[partLength:]}
	sums := [][md5.Size]byte{md5.Sum(parts[0]), md5.Sum(parts[1])}
	mp, err := c.MultipartUploadURL(ctx, int64(len(f.ct)), partLength, sums)
	require.NoError(t, err)
	require.Len(t, mp.PartURLs, 2)
	var etags []string
	for i, p := range parts {
		etag, err := c.PutUpload(ctx, mp.PartURLs[i], bytes.NewReader(p), int64(len(p)), sums[i])
		require.NoError(t, err)
		etags = append(etags, etag)
	}
	require.NoError(t, c.CompleteMultipart(ctx, mp.CompleteURL, etags))
	err = c.CompleteMultipart(ctx, mp.CompleteURL, etags)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae, "completion cannot be repeated")
	assert.Equal(t, 404, ae.Status)
	assert.Equal(t, "NoSuchUpload", ae.Code)
	assert.True(t, ae.ObjectStore)

	got, err := c.CreateFile(ctx, f.body(t, mp.ObjectKey, put(t, c, f.thumb)))
	require.NoError(t, err)
	stored, ok := s.Object(mp.ObjectKey)
	require.True(t, ok)
	assert.True(t, bytes.Equal(f.ct, stored), "the parts make the object")
	assert.Equal(t, int64(len(f.ct)), got.Info.FileSize)
}

// The completion body is the XML of UP.2, the ETags as the store gave them.
func TestCompleteMultipartBody(t *testing.T) {
	var body, ctype string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body, ctype = string(b), r.Header.Get("Content-Type")
		_, _ = io.WriteString(w, `<?xml version="1.0"?><CompleteMultipartUploadResult><ETag>"x-2"</ETag></CompleteMultipartUploadResult>`)
	}))
	defer hs.Close()
	c, err := apiclient.New(hs.URL, &http.Client{}, "test")
	require.NoError(t, err)
	require.NoError(t, c.CompleteMultipart(context.Background(), hs.URL+"/b/k?uploadId=1&X-Amz-Signature=s", []string{`"aa"`, `"b&b"`}))
	assert.Equal(t, "<CompleteMultipartUpload>\n"+
		`<Part><PartNumber>1</PartNumber><ETag>"aa"</ETag></Part>`+"\n"+
		`<Part><PartNumber>2</PartNumber><ETag>"b&amp;b"</ETag></Part>`+"\n"+
		"</CompleteMultipartUpload>", body)
	assert.Equal(t, "text/xml", ctype)
}

func TestCompleteMultipartRefusesMissingETags(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	assert.Error(t, c.CompleteMultipart(context.Background(), s.Store.URL+"/store/1/x?uploadId=u", nil))
	err := c.CompleteMultipart(context.Background(), s.Store.URL+"/store/1/x?uploadId=u", []string{`"a"`, ""})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "part 2 has no ETag")
	assert.Zero(t, s.RequestsWithPrefix("POST /store/"), "nothing was sent")
}

// S3 may answer a completion 200 and put an <Error> in the body: that is a
// failure, and one worth retrying.
func TestCompleteMultipartErrorInsideA200(t *testing.T) {
	for name, answer := range map[string]string{
		"error":   `<?xml version="1.0"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`,
		"garbage": `<html>proxy page`,
		"other":   `<Something/>`,
	} {
		t.Run(name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, answer) }))
			defer hs.Close()
			c, err := apiclient.New(hs.URL, &http.Client{}, "test")
			require.NoError(t, err)
			err = c.CompleteMultipart(context.Background(), hs.URL+"/b/k?uploadId=1&X-Amz-Signature=secret", []string{`"a"`})
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "secret")
			var ae *errs.ApiError
			if name == "error" {
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, "InternalError", ae.Code)
				assert.True(t, ae.ObjectStore)
				assert.Equal(t, retry.Transient, retry.Classify(err))
			} else {
				assert.False(t, errors.As(err, &ae), "not an answer of the store's: %v", err)
			}
		})
	}
}
