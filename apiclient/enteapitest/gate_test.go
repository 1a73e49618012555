package enteapitest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/errs"
)

// gateServer is a server with one user's album of n small files.
func gateServer(t *testing.T, n int) (*Server, *User, []*File) {
	t.Helper()
	s := New(Config{})
	t.Cleanup(s.Close)
	u := s.AddUser("a@example.org", "a", UserOptions{})
	a := u.AddAlbum("x")
	files := make([]*File, n)
	for i := range files {
		files[i] = a.AddFile(FileSpec{Title: fmt.Sprintf("f%d.jpg", i), Data: []byte{byte(i)}})
	}
	return s, u, files
}

func storeKey(u *User, f *File) string { return fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID) }

func isStore(key string) bool { return strings.HasPrefix(key, "GET /store/") }

// download fetches each file on its own goroutine and waits for them all.
func download(t *testing.T, s *Server, u *User, files []*File) {
	t.Helper()
	c := s.Client(nil).WithToken(u.Token())
	var wg sync.WaitGroup
	results := make([]error, len(files))
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, err := c.DownloadFile(context.Background(), f.ID)
			if err == nil {
				_, err = io.Copy(io.Discard, obj.Body)
				obj.Body.Close()
			}
			results[i] = err
		}()
	}
	wg.Wait()
	for _, err := range results {
		require.NoError(t, err)
	}
}

// A gate answers the requests it holds in the order its script lets them
// go, whatever order they came in, and counts them in flight meanwhile.
func TestAGateAnswersInItsScriptsOrder(t *testing.T) {
	s, u, files := gateServer(t, 2)
	a, b := storeKey(u, files[0]), storeKey(u, files[1])
	g := NewGate(t, s, isStore, func(g *Gate) {
		assert.ElementsMatch(t, []string{a, b}, g.Await(2))
		g.Serve(b)
		assert.Equal(t, []string{a}, g.Await(1), "still held after b was answered")
	})
	download(t, s, u, files)
	assert.Equal(t, 2, g.Most())
	most, _ := s.InFlight()
	assert.Equal(t, 2, most, "held requests are in flight")
}

// A held request has not taken its fault yet: the one let go first meets
// the first fault of its route, whichever came first.
func TestAGateDecidesWhichRequestMeetsAFault(t *testing.T) {
	s, u, files := gateServer(t, 1)
	route := storeKey(u, files[0])
	s.Inject(route, Status(http.StatusInternalServerError))
	NewGate(t, s, isStore, func(g *Gate) {
		g.Await(2)
		g.Serve(route + " bytes=1-1")
	})
	c := s.Client(nil).WithToken(u.Token())
	var wg sync.WaitGroup
	results := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, err := c.DownloadFileRange(context.Background(), files[0].ID, int64(i), int64(i))
			if err == nil {
				obj.Body.Close()
			}
			results[i] = err
		}()
	}
	wg.Wait()
	assert.NoError(t, results[0], "let go second: no fault left")
	assert.Equal(t, http.StatusInternalServerError, status(results[1]), "let go first: the fault")
}

// fakeTB records what a gate reports, and runs its cleanups on demand.
type fakeTB struct {
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

func (f *fakeTB) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// A script waiting for a request that never comes fails the test when its
// bound runs out, and lets every request go instead of hanging.
func TestAGateThatWaitsInVainFailsAndOpens(t *testing.T) {
	s, u, files := gateServer(t, 1)
	ft := &fakeTB{}
	waited := make(chan []string, 1)
	newGate(ft, s, isStore, 0, func(g *Gate) {
		waited <- g.Await(2) // one request comes, never two
	})
	download(t, s, u, files)
	ft.cleanup()
	assert.Nil(t, <-waited)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "2 requests held")
}

func status(err error) int {
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}
