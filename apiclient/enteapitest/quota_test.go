package enteapitest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

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
