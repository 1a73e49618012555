package apiclient_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/errs"
)

// sendingTransport reads a request's body a Read at a time, reporting each
// one, then answers when told to.
type sendingTransport struct {
	reads  chan int
	answer chan struct{}
}

func (s *sendingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	buf := make([]byte, 4)
	for {
		n, err := r.Body.Read(buf)
		s.reads <- n
		if err != nil {
			break
		}
	}
	r.Body.Close()
	<-s.answer
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok"))}, nil
}

type result struct {
	resp *http.Response
	err  error
}

// upload starts a PUT through deadline transport over a sendingTransport,
// its body fed through the returned pipe.
func upload(t *testing.T, timers *enteapitest.Timers) (*io.PipeWriter, *sendingTransport, chan result) {
	t.Helper()
	pr, pw := io.Pipe()
	base := &sendingTransport{reads: make(chan int, 100), answer: make(chan struct{})}
	d := apiclient.Deadlines{Headers: time.Second, BodyIdle: 2 * time.Second, TimerFor: timers.For}
	rt := apiclient.NewDeadlineTransport(base, d)
	req, err := http.NewRequest("PUT", "http://store.invalid/bucket/key", pr)
	require.NoError(t, err)
	out := make(chan result, 1)
	go func() {
		resp, err := rt.RoundTrip(req) //nolint:bodyclose // the test or its cleanup closes it
		out <- result{resp, err}
	}()
	t.Cleanup(func() {
		_ = pw.Close()
		close(base.answer)
		if r := <-out; r.resp != nil {
			r.resp.Body.Close()
		}
	})
	return pw, base, out
}

const bound = 10 * time.Second // only a failing test waits this long

// An upload that keeps moving is not cut by the body deadline, and no
// answer is awaited until the body is sent: then the headers deadline
// starts.
func TestAMovingUploadIsNotCut(t *testing.T) {
	timers := enteapitest.NewTimers()
	pw, base, out := upload(t, timers)
	const key = "PUT /bucket/key"
	_, err := pw.Write([]byte("part"))
	require.NoError(t, err)
	<-base.reads
	assert.False(t, timers.FireFor(key, time.Second, 0), "no answer is awaited while the body goes out")
	require.True(t, timers.FireFor(key, 2*time.Second, bound), "the body deadline passes, but bytes moved")
	require.NoError(t, pw.Close())
	<-base.reads
	require.True(t, timers.FireFor(key, time.Second, bound), "the body is sent: now the answer is awaited")
	r := <-out
	var te *errs.TimeoutError
	require.ErrorAs(t, r.err, &te)
	assert.Equal(t, "response headers", te.Phase)
	out <- result{} // for the cleanup
}

// A body that stops moving is cut after the body deadline.
func TestAStalledUploadIsCut(t *testing.T) {
	timers := enteapitest.NewTimers()
	pw, base, out := upload(t, timers)
	const key = "PUT /bucket/key"
	_, err := pw.Write([]byte("part"))
	require.NoError(t, err)
	<-base.reads
	require.True(t, timers.FireFor(key, 2*time.Second, bound), "bytes moved before this deadline")
	require.True(t, timers.FireFor(key, 2*time.Second, bound), "none since")
	r := <-out
	var te *errs.TimeoutError
	require.ErrorAs(t, r.err, &te)
	assert.Equal(t, "request body", te.Phase)
	assert.Equal(t, 2*time.Second, te.After)
	out <- result{} // for the cleanup
}

// A body sent in time gets its answer as any request does.
func TestAnUploadGetsItsAnswer(t *testing.T) {
	timers := enteapitest.NewTimers()
	pw, base, out := upload(t, timers)
	_, err := pw.Write([]byte("all of it"))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	for n := range base.reads {
		if n == 0 {
			break
		}
	}
	base.answer <- struct{}{}
	r := <-out
	require.NoError(t, r.err)
	b, err := io.ReadAll(r.resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(b))
	r.resp.Body.Close()
	out <- result{} // for the cleanup
}
