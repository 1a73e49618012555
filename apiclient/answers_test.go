package apiclient_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// The probe that confirms an outage asks only the failing URL's host:
// no path, no query (a presigned signature), no token; any answer counts,
// an error status included, and a connection that fails does not.
func TestAnswersAsksTheHostAloneWithNoSecret(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	var got []*http.Request
	fail := false
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r)
		if fail {
			return nil, errors.New("connection reset by peer")
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c2, err := apiclient.New(c.Endpoint(), hc, "1.2.3")
	require.NoError(t, err)
	c2 = c2.WithToken("secret-token")
	ctx := context.Background()

	assert.True(t, c2.Answers(ctx, c.Endpoint()+"/store/1/file-2?X-Amz-Signature=sig"), "a 404 is an answer")
	require.Len(t, got, 1)
	assert.Equal(t, "/", got[0].URL.Path)
	assert.Empty(t, got[0].URL.RawQuery)
	assert.Empty(t, got[0].Header.Get("X-Auth-Token"))

	assert.True(t, c2.Answers(ctx, ""), "an empty URL asks the API server")
	assert.Equal(t, c.Endpoint(), "http://"+got[1].URL.Host)

	fail = true
	assert.False(t, c2.Answers(ctx, c.Endpoint()+"/x"))
	assert.False(t, c2.Answers(ctx, "ftp://example.org/x"), "only http(s) is asked")
	assert.Len(t, got, 3)
}
