package apiclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newIdleBody(s string) *idleBody {
	return &idleBody{rc: io.NopCloser(strings.NewReader(s)), cancel: func() {}, idle: time.Minute, newTimer: RealTimer}
}

// A body read and closed gives its read buffer back for the next answer;
// one closed unread gives nothing back (and no empty buffer to the pool).
func TestABodyGivesItsReadBufferBack(t *testing.T) {
	back := false
	for range 20 { // the pool may drop what it is given (a quarter of it under -race)
		b := newIdleBody("photo")
		if _, err := io.ReadAll(b); err != nil {
			t.Fatal(err)
		}
		held := b.buf
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if p := idleBuffers.Get().(*[]byte); p == held {
			back = true
			break
		}
	}
	if !back {
		t.Fatal("a closed body's read buffer never came back")
	}
	for range 20 {
		if err := newIdleBody("unread").Close(); err != nil {
			t.Fatal(err)
		}
		if p := idleBuffers.Get().(*[]byte); p == nil || len(*p) != maxIdleRead {
			t.Fatalf("the pool handed out %v after a body closed unread", p)
		}
	}
}

// Over net/http's Transport a body is read straight into the caller's
// buffer, with no private one and no copy; over any other transport,
// which may ignore cancellation, through the private buffer.
func TestBodiesOfNetHTTPAreReadWithoutACopy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("photo bytes"))
	}))
	defer srv.Close()
	other := roundTripper(func(r *http.Request) (*http.Response, error) {
		return http.DefaultTransport.RoundTrip(r)
	})
	for _, c := range []struct {
		name    string
		base    http.RoundTripper
		private bool
	}{
		{"net/http", http.DefaultTransport.(*http.Transport).Clone(), false},
		{"another transport", other, true},
	} {
		req, err := http.NewRequest("GET", srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := NewDeadlineTransport(c.base, DefaultDeadlines()).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || string(got) != "photo bytes" {
			t.Fatalf("%s: read %q, %v", c.name, got, err)
		}
		if b := resp.Body.(*idleBody); (b.buf != nil) != c.private {
			t.Errorf("%s: private buffer %v, want %v", c.name, b.buf != nil, c.private)
		}
		resp.Body.Close()
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
