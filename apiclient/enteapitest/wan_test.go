package enteapitest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/errs"
)

// sleeps records the delays WAN mode asks for, and never waits.
type sleeps struct {
	mu    sync.Mutex
	total time.Duration
	n     int
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += d
	s.n++
	return nil
}

func TestWANDelaysEveryRequestAndPacesBodies(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	f := u.AddAlbum("x").AddFile(enteapitest.FileSpec{Title: "big.bin", Size: 10 << 20})
	var sl sleeps
	s.SetWAN(enteapitest.WAN{Latency: 30 * time.Millisecond, Bandwidth: 20 << 20, Sleep: sl.sleep})
	obj, err := s.Client(nil).WithToken(u.Token()).DownloadFile(context.Background(), f.ID)
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, obj.Body)
	require.NoError(t, err)
	obj.Body.Close()
	// Two round trips (museum's redirect, the store), and the body at
	// 20 MiB/s: half a second for 10 MiB and its chunks' overhead.
	want := 60*time.Millisecond + time.Duration(float64(n)/float64(20<<20)*float64(time.Second))
	assert.InDelta(t, float64(want), float64(sl.total), float64(time.Millisecond))
	maxStore, limited := s.InFlight()
	assert.Equal(t, 1, maxStore)
	assert.Equal(t, 0, limited)
}

// museum's rate limiter answers 429 with a fixed body and no Retry-After
// (server/pkg/middleware/rate_limit.go, a621d73).
func TestWANRateLimitsAsMuseumDoes(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	a := u.AddAlbum("x")
	f := a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: []byte("a")})
	s.SetWAN(enteapitest.WAN{APILimit: 2})
	// All three in flight at once: the third is refused as it arrives.
	enteapitest.NewGate(t, s, func(key string) bool { return strings.HasPrefix(key, "GET /files/download/") },
		func(g *enteapitest.Gate) { g.Await(3) })
	c := s.Client(nil).WithToken(u.Token())
	var wg sync.WaitGroup
	results := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, err := c.DownloadFile(context.Background(), f.ID)
			if err == nil {
				obj.Body.Close()
			}
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	var refused []*errs.ApiError
	for err := range results {
		if err != nil {
			ae := &errs.ApiError{}
			require.ErrorAs(t, err, &ae)
			refused = append(refused, ae)
		}
	}
	require.Len(t, refused, 1, "the third request in flight is refused")
	assert.Equal(t, http.StatusTooManyRequests, refused[0].Status)
	assert.Empty(t, refused[0].RetryAfter, "museum sends no Retry-After")
	_, limited := s.InFlight()
	assert.Equal(t, 1, limited)
}

func TestStoreServesClosedRanges(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "a", enteapitest.UserOptions{})
	f := u.AddAlbum("x").AddFile(enteapitest.FileSpec{Title: "a.bin", Size: 1 << 20})
	c := s.Client(nil).WithToken(u.Token())
	whole, err := c.DownloadFile(context.Background(), f.ID)
	require.NoError(t, err)
	all, err := io.ReadAll(whole.Body)
	require.NoError(t, err)
	whole.Body.Close()
	for _, tc := range []struct{ from, to int64 }{{0, 0}, {10, 99}, {1000, int64(len(all)) - 1}, {1000, int64(len(all)) + 50}} {
		t.Run(fmt.Sprintf("from=%d,to=%d", tc.from, tc.to), func(t *testing.T) {
			obj, err := c.DownloadFileRange(context.Background(), f.ID, tc.from, tc.to)
			require.NoError(t, err)
			defer obj.Body.Close()
			got, err := io.ReadAll(obj.Body)
			require.NoError(t, err)
			end := min(tc.to, int64(len(all))-1)
			assert.Equal(t, 206, obj.Status)
			assert.Equal(t, fmt.Sprintf("bytes %d-%d/%d", tc.from, end, len(all)), obj.ContentRange)
			assert.Equal(t, all[tc.from:end+1], got)
		})
	}
}
