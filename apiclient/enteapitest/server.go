// Package enteapitest is a fake Ente server for tests and demos: an API
// server that behaves like museum for everything quak uses, with real SRP,
// real encryption of everything it serves, 307 redirects to a separate fake
// object store, sharing, trash, thumbnail updates with museum's rules, and
// fault injection per request. It counts every request.
//
// File metadata follows Ente's apps: creationTime, modificationTime and
// latitude/longitude in the sealed metadata ((0, 0) means no location, and
// ZeroLocation writes it so); edits in the public magic metadata as the
// web and mobile apps write them: editedName, editedTime (µs), caption, lat
// and long (used only when not both 0), and offsetTime, the "±HH:mm" UTC
// offset of the place a photo was taken (web/packages/media/file-metadata.ts;
// a date edit in the web app keeps it).
//
// Rules of museum it keeps (read in museum's source, a621d73, and seen on a
// running museum):
//   - A new file's updationTime is stamped when its upload request arrives;
//     the entry becomes visible only at commit, up to seconds later, and the
//     album's updationTime is then set to that stamp, overwritten rather
//     than maxed (repo/file.go; AddFileLate). An entry can appear below a
//     cursor a reader already passed.
//   - GET /collections/file: 404 FILE_NOT_FOUND_IN_ALBUM without an entry
//     or for a deleted one; 403 {} for someone else's file unless the album
//     is shared to the caller right now, which makes a collaborator's file
//     in the caller's own album 403 too (CollectionController.GetFile).
//   - Its rate limiter answers 429 {"error":"Rate limit breached, try
//     later"} with no Retry-After (middleware/rate_limit.go): RateLimited
//     and WAN.APILimit answer so.
//   - Unsharing and sharing again keeps the collection id; in between the
//     sharee lists a tombstone and the album's diff answers 404.
//   - PUT /files/thumbnail compares the new object's size with the existing
//     thumbnail object's recorded size (object_keys.size), answers 500 when
//     it is larger, and records the new size there; files.info's thumbSize
//     (in the diff and POST /files/info) keeps the size at upload forever.
//     GET /files/large-thumbnails?threshold=N reads object_keys.size. An
//     exact repeat answers 500 and wedges museum until a restart (Restart).
//     Seen on a running museum (refenv, a621d73): after a 299209-byte
//     thumbnail was replaced by a 77372-byte one, /files/info still said
//     thumbSize 299209, large-thumbnails listed the file at threshold 77372
//     and not at 77373, and the object served was 77372 bytes.
//   - POST /files/info fails the whole batch when one id is another user's
//     (403), unknown or repeated (400) (repo.VerifyFileOwner); seen on a
//     running museum: a repeated id and an unknown one each answered 400 {}.
package enteapitest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/apiclient"
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

	mu          sync.Mutex
	cfg         Config
	rand        io.Reader
	clock       int64
	frozen      bool
	nextID      int64
	users       map[int64]*User
	tokens      map[string]token
	srpSessions map[string]*srpSession
	twoFactor   map[string]*twoFactorSession
	passkeys    map[string]*passkeySession
	collections map[int64]*Album
	files       map[int64]*File
	objects     map[string]*object
	usedThumbs  map[string]bool
	links       *linkState // public album links (links.go)
	wedged      *wedge
	faults      map[string][]Fault
	counts      map[string]int
	chaos       func(route string) (Fault, bool)
	onStall     func(key string, body bool)
	tamperDiff  func(collectionID int64, page []apiclient.File) []apiclient.File
	ranges      map[string][]string
	wan         WAN
	gate        *Gate
	storeNow    int // object store GETs in flight
	handling    int // object store requests being handled, for Settle
	settled     *sync.Cond
	apiNow      int // API requests in flight
	maxStore    int
	limited     int // requests WAN mode refused

	cacheMu   sync.Mutex // rangeSource: one generated object held in memory
	cacheKey  string
	cacheData []byte
}

type token struct {
	userID int64
	pkg    string
}

// New starts a fake Ente server on loopback.
func New(cfg Config) *Server {
	if cfg.PageSize <= 0 {
		cfg.PageSize = 2500
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	s := &Server{
		Stalled:     make(chan string, 64),
		cfg:         cfg,
		rand:        cfg.Rand,
		clock:       1_700_000_000_000_000,
		nextID:      1000,
		users:       map[int64]*User{},
		tokens:      map[string]token{},
		srpSessions: map[string]*srpSession{},
		twoFactor:   map[string]*twoFactorSession{},
		passkeys:    map[string]*passkeySession{},
		collections: map[int64]*Album{},
		files:       map[int64]*File{},
		objects:     map[string]*object{},
		usedThumbs:  map[string]bool{},
		faults:      map[string][]Fault{},
		counts:      map[string]int{},
		ranges:      map[string][]string{},
	}
	s.settled = sync.NewCond(&s.mu)
	s.Store = httptest.NewServer(s.tracked(s.counted(http.HandlerFunc(s.serveStore))))
	api := httptest.NewUnstartedServer(s.counted(s.apiRoutes()))
	if cfg.Listener != nil {
		api.Listener.Close()
		api.Listener = cfg.Listener
	}
	api.Start()
	s.API = api
	return s
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

// Requests counts the requests seen for a route, written "METHOD /path"
// without the query string (e.g. "GET /files/download/1001"; object store
// requests are "GET /store/<key>").
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[route]
}

// RequestsWithPrefix counts requests whose route starts with prefix.
func (s *Server) RequestsWithPrefix(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for r, c := range s.counts {
		if strings.HasPrefix(r, prefix) {
			n += c
		}
	}
	return n
}

// now advances and returns the server clock (µs). Frozen, it stands still,
// so many rows share one updationTime.
func (s *Server) now() int64 {
	if !s.frozen {
		s.clock++
	}
	return s.clock
}

// Freeze stops the clock until Unfreeze: everything changed meanwhile gets
// the same updationTime, as museum can produce.
func (s *Server) Freeze() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	s.frozen = true
}

// Advance moves the clock d ahead: the hours that pass between a backup
// and the next change, which the clock's one µs a step never models.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock += d.Microseconds()
}

// Unfreeze restarts the clock.
func (s *Server) Unfreeze() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = false
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

func (s *Server) random(n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		panic("enteapitest: random source failed: " + err.Error())
	}
	return b
}

// counted counts each request and applies any fault scripted for its route.
func (s *Server) counted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := r.Method + " " + r.URL.Path
		s.mu.Lock()
		s.counts[route]++
		if r.URL.Query().Has("token") {
			s.counts["QUERYTOKEN "+route]++
		}
		s.mu.Unlock()
		w, leave, ok := s.throughWAN(w, r)
		defer leave()
		if !ok {
			return
		}
		s.mu.Lock()
		f, ok := s.nextFault(route)
		chaos := s.chaos
		s.mu.Unlock()
		if !ok && chaos != nil {
			f, ok = chaos(route)
		}
		if ok {
			s.applyFault(w, r, f, h)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// tracked counts the requests h is handling, for Settle.
func (s *Server) tracked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.handling++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.handling--
			s.settled.Broadcast()
			s.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// Settle closes every connection to the object store and waits until no
// request to it is being handled. A request a client sent before is then
// answered, or never read: the faults queued and the ranges logged after
// Settle are a later run's alone, whatever the machine's load. A request
// the gate holds ends with its connection.
func (s *Server) Settle() {
	s.Store.CloseClientConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.handling > 0 {
		s.settled.Wait()
	}
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "fake-"+fmt.Sprint(status))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiErr answers in museum's typed error shape, or {} when code is empty.
func apiErr(w http.ResponseWriter, status int, code, msg string) {
	if code == "" {
		writeJSON(w, status, map[string]any{})
		return
	}
	writeJSON(w, status, map[string]string{"code": code, "message": msg})
}

// middlewareErr answers in museum's middleware shape {"error": ...}.
func middlewareErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func readJSON(r *http.Request, v any) bool {
	return json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(v) == nil
}

// decodeBody reads the JSON body into v, or answers 400 as museum does.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if !readJSON(r, v) {
		apiErr(w, 400, "BAD_REQUEST", "bad body")
		return false
	}
	return true
}

// authUser returns the user of the request's token (header or ?token=),
// checking that it is used under the app it was issued for.
func (s *Server) authUser(w http.ResponseWriter, r *http.Request) (*User, bool) {
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		tok = r.URL.Query().Get("token")
	}
	if tok == "" {
		middlewareErr(w, http.StatusUnauthorized, "missing token")
		return nil, false
	}
	s.mu.Lock()
	t, ok := s.tokens[tok]
	var u *User
	if ok && t.pkg == appOf(r) {
		u = s.users[t.userID]
	}
	s.mu.Unlock()
	if u == nil {
		middlewareErr(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}
	return u, true
}

// appOf is museum's app scope of a request, from X-Client-Package.
func appOf(r *http.Request) string {
	p := r.Header.Get("X-Client-Package")
	switch {
	case strings.HasPrefix(p, "io.ente.auth"):
		return "auth"
	case strings.HasPrefix(p, "io.ente.locker"):
		return "locker"
	}
	return "photos"
}

func (s *Server) apiRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/srp/attributes", s.srpAttributes)
	mux.HandleFunc("POST /users/srp/create-session", s.srpCreateSession)
	mux.HandleFunc("POST /users/srp/verify-session", s.srpVerifySession)
	mux.HandleFunc("POST /users/ott", s.sendOTT)
	mux.HandleFunc("POST /users/verify-email", s.verifyEmail)
	mux.HandleFunc("POST /users/two-factor/verify", s.verifyTOTP)
	mux.HandleFunc("GET /users/two-factor/passkeys/get-token", s.passkeyToken)
	mux.HandleFunc("GET /users/session-validity/v2", s.sessionValidity)
	mux.HandleFunc("POST /users/logout", s.logout)
	mux.HandleFunc("GET /collections/v2", s.listCollections)
	mux.HandleFunc("GET /collections/v2/diff", s.diff)
	mux.HandleFunc("GET /collections/file", s.collectionFile)
	mux.HandleFunc("GET /trash/v2/diff", s.trashDiff)
	mux.HandleFunc("POST /files/info", s.filesInfo)
	mux.HandleFunc("GET /files/download/{id}", s.redirectObject(false))
	mux.HandleFunc("GET /files/preview/{id}", s.redirectObject(true))
	mux.HandleFunc("GET /files/upload-urls", s.uploadRoute(true, func(w http.ResponseWriter, r *http.Request, _ *User) { s.uploadURLs(w, r) }))
	mux.HandleFunc("POST /files/upload-url", s.uploadRoute(false, s.uploadURL))
	mux.HandleFunc("POST /files/multipart-upload-url", s.uploadRoute(false, s.multipartUploadURL))
	mux.HandleFunc("GET /files/multipart-upload-urls", s.uploadRoute(true, s.plainMultipartUploadURLs))
	mux.HandleFunc("POST /files", s.createFile)
	mux.HandleFunc("POST /collections", s.createCollection)
	mux.HandleFunc("GET /collections/{id}", s.getCollection)
	mux.HandleFunc("POST /collections/add-files", s.addFiles)
	mux.HandleFunc("GET /users/details/v2", s.details)
	mux.HandleFunc("PUT /files/thumbnail", s.updateThumbnail)
	mux.HandleFunc("GET /files/large-thumbnails", s.largeThumbnails)
	mux.HandleFunc("POST /collections/share-url", s.createShareURL)
	mux.HandleFunc("PUT /collections/share-url", s.updateShareURL)
	mux.HandleFunc("DELETE /collections/share-url/{id}", s.deleteShareURL)
	mux.HandleFunc("GET /public-collection/info", s.linkInfo)
	mux.HandleFunc("GET /public-collection/diff", s.linkDiff)
	mux.HandleFunc("GET /public-collection/files/download/{id}", s.linkObject(false))
	mux.HandleFunc("GET /public-collection/files/preview/{id}", s.linkObject(true))
	mux.HandleFunc("POST /public-collection/verify-password", s.linkVerifyPassword)
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]string{"message": "pong", "id": "enteapitest"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { apiErr(w, 404, "", "") })
	return mux
}

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
