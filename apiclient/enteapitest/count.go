package enteapitest

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// counter counts requests by route, and logs the Range of each object
// store GET.
type counter struct {
	mu     sync.Mutex
	counts map[string]int
	ranges map[string][]string
}

func newCounter() *counter {
	return &counter{counts: map[string]int{}, ranges: map[string][]string{}}
}

func (c *counter) add(route string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[route]++
}

func (c *counter) addRange(route, rg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ranges[route] = append(c.ranges[route], rg)
}

// counted counts each request, and each one with a token in its query.
func (s *Server) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := r.Method + " " + r.URL.Path
		s.counts.add(route)
		if r.URL.Query().Has("token") {
			s.counts.add("QUERYTOKEN " + route)
		}
		h.ServeHTTP(w, r)
	})
}

// Requests counts the requests seen for a route, written "METHOD /path"
// without the query string (e.g. "GET /files/download/1001"; object store
// requests are "GET /store/<key>").
func (s *Server) Requests(route string) int {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	return s.counts.counts[route]
}

// RequestsWithPrefix counts requests whose route starts with prefix.
func (s *Server) RequestsWithPrefix(prefix string) int {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	n := 0
	for r, c := range s.counts.counts {
		if strings.HasPrefix(r, prefix) {
			n += c
		}
	}
	return n
}

// Ranges lists the Range header of each store request of route (""
// for none), in order.
func (s *Server) Ranges(route string) []string {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	return append([]string(nil), s.counts.ranges[route]...)
}

// Leaks counts store requests that carried the account token anywhere.
func (s *Server) Leaks() int { return s.RequestsWithPrefix("LEAK ") }

// QueryTokens counts requests, to the API or the store, that carried a
// token in the URL's query string, where proxies log it.
func (s *Server) QueryTokens() int { return s.RequestsWithPrefix("QUERYTOKEN ") }

// tracker counts the requests a handler is handling, for Settle.
type tracker struct {
	mu       sync.Mutex
	handling int
	settled  *sync.Cond
}

func newTracker() *tracker {
	t := &tracker{}
	t.settled = sync.NewCond(&t.mu)
	return t
}

// track counts the requests h is handling.
func (t *tracker) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		t.handling++
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			t.handling--
			t.settled.Broadcast()
			t.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// Settle closes every connection to the object store and waits until no
// request to it is being handled. A request a client sent before is then
// answered, or never read: the faults queued and the ranges logged after
// Settle are a later run's alone, whatever the machine's load. A request
// the gate holds ends with its connection. A connection still waiting to
// be accepted when Settle began is accepted first: the listener hands
// connections over in the order they came, so once a request of Settle's
// own, on a new connection, is answered, every connection before it is
// the server's, and is closed.
func (s *Server) Settle() {
	tr := &http.Transport{DisableKeepAlives: true} // a connection of its own
	if resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(s.Store.URL + settlePath); err == nil {
		_ = resp.Body.Close()
	}
	tr.CloseIdleConnections()
	s.Store.CloseClientConnections()
	s.busy.mu.Lock()
	defer s.busy.mu.Unlock()
	for s.busy.handling > 0 {
		s.busy.settled.Wait()
	}
}

// settlePath is Settle's own request at the store, answered before any
// count, fault or gate.
const settlePath = "/__settle"

func answersSettle(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == settlePath {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}
