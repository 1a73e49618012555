package apiclient_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// dialCounter counts the connections a transport opens, by address.
type dialCounter struct {
	mu    sync.Mutex
	dials map[string]int
}

func (d *dialCounter) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	var dialer net.Dialer
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.mu.Lock()
		d.dials[addr]++
		d.mu.Unlock()
		return dialer.DialContext(ctx, network, addr)
	}
	return t
}

func (d *dialCounter) of(rawURL string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials[rawURL[len("http://"):]]
}

// museum answers a download with a redirect that carries a short HTML page.
// Left unread, it costs the connection: every file would open a new one to
// museum (a round trip, and two more for TLS, per file).
func TestDownloadsReuseTheirConnections(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	u := s.AddUser("alice@example.org", "correct horse", enteapitest.UserOptions{})
	a := u.AddAlbum("a")
	var files []*enteapitest.File
	for i := range 5 {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: "p.jpg", Data: bytes.Repeat([]byte{byte(i)}, 3000)}))
	}
	dc := &dialCounter{dials: map[string]int{}}
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(dc.transport(), apiclient.DefaultDeadlines())}
	c := s.Client(hc).WithToken(u.Token())

	for _, f := range files {
		o, err := c.DownloadFile(context.Background(), f.ID)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, o.Body)
		require.NoError(t, err)
		require.NoError(t, o.Body.Close())
	}
	assert.Equal(t, 1, dc.of(s.API.URL), "connections opened to the API server")
	assert.Equal(t, 1, dc.of(s.Store.URL), "connections opened to the object store")
}

// pastRedirect downloads file 1 from a server whose /files/download/1
// answers with page (a redirect to /object), and returns what /object sent
// and how many connections the client opened.
func pastRedirect(t *testing.T, page http.HandlerFunc) (string, int) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/files/download/1", page)
	mux.HandleFunc("/object", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("object")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	dc := &dialCounter{dials: map[string]int{}}
	c, err := apiclient.New(srv.URL, &http.Client{Transport: dc.transport()}, "test")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := c.DownloadFile(ctx, 1)
	require.NoError(t, err)
	got, err := io.ReadAll(o.Body)
	require.NoError(t, err)
	require.NoError(t, o.Body.Close())
	return string(got), dc.of(srv.URL)
}

// A redirect whose page never ends is read no further than a page: the
// download goes on, on a new connection.
func TestAnEndlessRedirectPageIsNotRead(t *testing.T) {
	got, dials := pastRedirect(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/object")
		w.WriteHeader(http.StatusTemporaryRedirect)
		page := bytes.Repeat([]byte("<p>moved</p>"), 1000)
		for r.Context().Err() == nil {
			if _, err := w.Write(page); err != nil {
				return
			}
		}
	})
	assert.Equal(t, "object", got)
	assert.Equal(t, 2, dials)
}

// A redirect page that trickles in is given up on after a moment, not read
// at the server's pace: the download goes on, on a new connection.
func TestATricklingRedirectPageIsNotWaitedFor(t *testing.T) {
	defer apiclient.SetDrainWait(10 * time.Millisecond)()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	got, dials := pastRedirect(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/object")
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusTemporaryRedirect)
		_, _ = w.Write([]byte("<a"))
		w.(http.Flusher).Flush()
		select { // the rest of the page never comes
		case <-release:
		case <-r.Context().Done():
		}
	})
	assert.Equal(t, "object", got)
	assert.Equal(t, 2, dials)
}

// A page of up to 64 KiB is read and its connection used again; a longer
// one is not read to its end, and its connection is closed.
func TestARedirectPageIsReadUpTo64KiB(t *testing.T) {
	for _, c := range []struct {
		size  int
		dials int
	}{{64 << 10, 1}, {64<<10 + 1, 2}} {
		t.Run(fmt.Sprint(c.size), func(t *testing.T) {
			got, dials := pastRedirect(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", "/object")
				w.Header().Set("Content-Length", fmt.Sprint(c.size))
				w.WriteHeader(http.StatusTemporaryRedirect)
				_, _ = w.Write(bytes.Repeat([]byte("x"), c.size))
			})
			assert.Equal(t, "object", got)
			assert.Equal(t, c.dials, dials)
		})
	}
}
