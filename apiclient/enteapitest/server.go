package enteapitest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest/model"
)

// Config tunes a Server. The zero value is a sensible test server.
type Config struct {
	// PageSize is the nominal diff page size (museum: 2500). Tests use tiny
	// pages to exercise paging.
	PageSize int
	// Listener, if set, is where the API server listens (the object store
	// always takes a free loopback port). Default: a free loopback port.
	Listener net.Listener
	// Rand is the source of keys, nonces and tokens (default crypto/rand).
	Rand io.Reader
}

// Server is a running fake Ente: API and object store. Methods are safe for
// concurrent use with requests in flight.
type Server struct {
	API   *httptest.Server
	Store *httptest.Server

	// Stalled receives a value whenever a fault starts stalling a request,
	// so a test can fire its deadline timers at exactly that moment.
	Stalled chan string

	m      *model.Museum
	counts *counter
	faults *faults
	wan    *wanState
	gates  *gateSlot
	busy   *tracker
	tamper *tamper
}

// New starts a fake Ente server on loopback.
func New(cfg Config) *Server {
	s := &Server{Stalled: make(chan string, 64), counts: newCounter(), faults: newFaults(), wan: &wanState{},
		gates: &gateSlot{}, busy: newTracker(), tamper: &tamper{}}
	s.m = model.New(model.Config{PageSize: cfg.PageSize, Rand: cfg.Rand, Event: s.event})
	s.Store = httptest.NewServer(answersSettle(s.busy.track(s.middleware(http.HandlerFunc(s.serveStore)))))
	api := httptest.NewUnstartedServer(s.middleware(s.apiRoutes()))
	if cfg.Listener != nil {
		api.Listener.Close()
		api.Listener = cfg.Listener
	}
	api.Start()
	s.API = api
	return s
}

// middleware is what every request goes through, API and object store:
// counted, then WAN mode and a Gate's hold, then any fault scripted.
func (s *Server) middleware(h http.Handler) http.Handler {
	return s.counted(s.throughWAN(s.withFaults(h)))
}

// event counts what the model reports and no request shows, and tells
// Stalled of a write that hangs.
func (s *Server) event(what string) {
	s.counts.add(what)
	if what == "HUNG PUT /files/thumbnail" {
		select {
		case s.Stalled <- what:
		default:
		}
	}
}

// Close stops both servers.
func (s *Server) Close() {
	s.API.CloseClientConnections()
	s.Store.CloseClientConnections()
	s.API.Close()
	s.Store.Close()
}

// URL is the API endpoint to give quak.
func (s *Server) URL() string { return s.API.URL }

// Client returns an apiclient for this server using hc (nil: a plain client).
func (s *Server) Client(hc *http.Client) *apiclient.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	c, err := apiclient.New(s.URL(), hc, "test")
	if err != nil {
		panic(err)
	}
	return c
}

func (s *Server) apiRoutes() http.Handler {
	mux := http.NewServeMux()
	s.userRoutes(mux)
	s.collectionRoutes(mux)
	s.fileRoutes(mux)
	s.uploadRoutes(mux)
	s.linkRoutes(mux)
	s.publicRoutes(mux)
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]string{"message": "pong", "id": "enteapitest"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 404, struct{}{}) })
	return mux
}

// AddUser creates an account with real keys and, unless told otherwise, SRP.
func (s *Server) AddUser(email, password string, o UserOptions) *User {
	return s.m.AddUser(email, password, o)
}

// Album returns the album of that id, made by a test or through the API.
func (s *Server) Album(id int64) *Album { return s.m.Album(id) }

// File returns the file of that id, made by a test or through the API.
func (s *Server) File(id int64) *File { return s.m.File(id) }

// Freeze stops the clock until Unfreeze: everything changed meanwhile gets
// the same updationTime, as museum can produce.
func (s *Server) Freeze() { s.m.Freeze() }

// Unfreeze restarts the clock.
func (s *Server) Unfreeze() { s.m.Unfreeze() }

// Advance moves the clock d ahead: the hours that pass between a backup
// and the next change, which the clock's one µs a step never models.
func (s *Server) Advance(d time.Duration) { s.m.Advance(d) }

// ServerTime is the server's clock (µs): what link expiry, the stale
// cache and the password rate limit are judged by. Advance moves it.
func (s *Server) ServerTime() int64 { return s.m.Now() }

// LapseSubscription ends u's subscription: u's links answer 410 "no
// active subscription".
func (s *Server) LapseSubscription(u *User) { s.m.LapseSubscription(u) }

// PendingUploads counts multipart uploads minted and not completed.
func (s *Server) PendingUploads() int { return s.m.PendingUploads() }

// PlaceObject puts an object of size zero bytes under key, as if it had
// been uploaded, generated as it is read: for tests of sizes no test can
// send, such as museum's 10 GiB limit.
func (s *Server) PlaceObject(key string, size int64) { s.m.PlaceObject(key, size) }

// Object returns the bytes stored under key, and false when there are none.
func (s *Server) Object(key string) ([]byte, bool) { return s.m.ObjectBytes(key) }

// Restart ends a wedge as restarting museum would: its transaction rolls
// back and every write waiting on it goes ahead.
func (s *Server) Restart() { s.m.Restart() }

// ExactRepeats counts PUT /files/thumbnail calls that repeated an object
// key already committed: each wedges museum until it restarts.
func (s *Server) ExactRepeats() int { return s.Requests("EXACT REPEAT PUT /files/thumbnail") }

// Hung counts writes that found museum wedged and waited.
func (s *Server) Hung() int { return s.Requests("HUNG PUT /files/thumbnail") }

// User is the user of that email, or nil.
func (s *Server) User(email string) *User { return s.m.User(email) }
