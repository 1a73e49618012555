package enteapitest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A multipart upload minted by count: 1 to 10,000 parts, whose URLs take
// any length and need no Content-MD5 (one sent is still checked); its
// completion refuses parts but the last under 5 MiB, after the order and
// the parts themselves.
func TestPlainMultipartRules(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	for _, count := range []string{"0", "10001", "-1", "two", ""} {
		st, body := up.raw("GET", "/files/multipart-upload-urls?count="+count, "")
		assert.Equal(t, 400, st, "count=%s", count)
		assert.JSONEq(t, `{}`, body)
	}
	st, body := up.raw("GET", "/files/multipart-upload-urls?count=10000", "")
	require.Equal(t, 200, st)
	assert.Equal(t, 10000, strings.Count(body, "partNumber="), "10,000 part URLs under urls")
	assert.True(t, strings.HasPrefix(body, `{"urls":{"objectKey":`), body)

	complete := func(url string, numbers []int, etags []string) (int, string) {
		var b strings.Builder
		b.WriteString("<CompleteMultipartUpload>")
		for i, n := range numbers {
			fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", n, etags[i])
		}
		b.WriteString("</CompleteMultipartUpload>")
		req, err := http.NewRequest("POST", url, strings.NewReader(b.String()))
		require.NoError(t, err)
		return do(t, req)
	}
	put := func(url string, part []byte) string {
		etag, err := up.c.PutUpload(ctx, url, bytes.NewReader(part), int64(len(part)), md5.Sum(part))
		require.NoError(t, err)
		return etag
	}

	small, last := []byte("a small first part"), []byte("the last part")
	mp, err := up.c.PlainMultipartUploadURLs(ctx, 2)
	require.NoError(t, err)
	st, _ = storePut(t, mp.PartURLs[0], small, int64(len(small)), "")
	assert.Equal(t, 200, st, "a part without Content-MD5, of any length")
	st, body = storePut(t, mp.PartURLs[0], small, int64(len(small)), b64md5(last))
	assert.Equal(t, 400, st, "a Content-MD5 sent is checked")
	assert.Contains(t, body, "BadDigest")
	etags := []string{put(mp.PartURLs[0], small), put(mp.PartURLs[1], last)}
	st, body = complete(mp.CompleteURL, []int{2, 1}, []string{etags[1], etags[0]})
	assert.Equal(t, 400, st)
	assert.Contains(t, body, "InvalidPartOrder", "the order is checked before the sizes")
	st, body = complete(mp.CompleteURL, []int{1, 2}, []string{etags[0], `"00000000000000000000000000000000"`})
	assert.Equal(t, 400, st)
	assert.Contains(t, body, "InvalidPart", "the parts are checked before the sizes")
	st, body = complete(mp.CompleteURL, []int{1, 2}, etags)
	assert.Equal(t, 400, st)
	assert.Contains(t, body, "EntityTooSmall")
	st, _ = complete(mp.CompleteURL, []int{2}, etags[1:])
	assert.Equal(t, 200, st, "the last part alone may be small")

	big := bytes.Repeat([]byte{7}, 5<<20)
	mp, err = up.c.PlainMultipartUploadURLs(ctx, 2)
	require.NoError(t, err)
	etags = []string{put(mp.PartURLs[0], big), put(mp.PartURLs[1], last)}
	st, body = complete(mp.CompleteURL, []int{1, 2}, etags)
	assert.Equal(t, 200, st, body)
	obj, ok := up.s.Object(mp.ObjectKey)
	require.True(t, ok)
	assert.Equal(t, append(big, last...), obj)
}
