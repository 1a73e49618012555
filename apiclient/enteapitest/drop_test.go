package enteapitest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/retry"
)

// Drop cuts the connection before the server acts: to the client it looks
// just like LoseResponse, which acted.
func TestDropLeavesTheRequestUnapplied(t *testing.T) {
	up := newUploader(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("d"), 64)
	sum := md5.Sum(data)
	u, err := up.c.UploadURL(ctx, int64(len(data)), sum)
	require.NoError(t, err)
	up.s.InjectUpload(enteapitest.StepPut, enteapitest.Drop())
	_, err = up.c.PutUpload(ctx, u.URL, bytes.NewReader(data), int64(len(data)), sum)
	require.Error(t, err)
	assert.Equal(t, retry.Transient, retry.Classify(err), "a cut connection, as a lost answer is")
	_, stored := up.s.Object(u.ObjectKey)
	assert.False(t, stored, "never applied")
}
