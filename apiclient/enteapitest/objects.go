package enteapitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/quak-photos/quak/apiclient"
)

// object is what the fake object store holds under a key: bytes, or a
// generator of size bytes for large files.
type object struct {
	data []byte
	gen  func(io.Writer) error
	size int64
	lost bool   // the row exists but the bytes are gone
	etag string // changes when the object is stored again
}

func (o *object) writeTo(w io.Writer) error {
	if o.gen != nil {
		return o.gen(w)
	}
	_, err := w.Write(o.data)
	return err
}

// canRead is museum's access rule: the owner, or anyone the file is shared
// with through a collection; s.mu is held.
func (s *Server) canRead(u *User, f *File) bool {
	if f.Owner == u {
		return true
	}
	for _, a := range s.collections {
		if e := a.entries[f.ID]; e != nil && !e.deleted && s.readable(u, a.ID) != nil {
			return true
		}
	}
	return false
}

func (s *Server) redirectObject(thumb bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.authUser(w, r)
		if !ok {
			return
		}
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		s.mu.Lock()
		f := s.files[id]
		var key string
		allowed := f != nil && s.canRead(u, f)
		if f != nil {
			key = f.fileObject
			if thumb {
				key = f.thumbObject
			}
		}
		s.mu.Unlock()
		switch {
		case f == nil:
			apiErr(w, 404, "", "")
		case !allowed:
			apiErr(w, 403, "", "")
		case key == "":
			apiErr(w, 404, "", "")
		case !thumb && f.spec.RedirectTo != "":
			w.Header().Set("Location", f.spec.RedirectTo)
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			// As museum: a 307 with a short HTML page of the link (504
			// bytes on museum, Content-Length set). A client that closes
			// it unread loses the connection.
			http.Redirect(w, r, s.presign(key), http.StatusTemporaryRedirect)
		}
	}
}

// presign is a presigned-looking URL of key on the fake object store.
func (s *Server) presign(key string) string {
	return s.Store.URL + "/store/" + key + "?X-Amz-Expires=604800&X-Amz-Signature=fakesignature"
}

func (s *Server) serveStore(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, "/store/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("X-Auth-Token") != "" || strings.Contains(r.Header.Get("Referer"), "token=") || r.URL.Query().Has("token") {
		// The object store must never see the account token.
		s.mu.Lock()
		s.counts["LEAK "+r.URL.Path]++
		s.mu.Unlock()
	}
	switch r.Method {
	case "GET":
		s.mu.Lock()
		o := s.objects[key]
		s.mu.Unlock()
		if o == nil || o.lost {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(404)
			fmt.Fprintf(w, "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>%s</Key></Error>", key)
			return
		}
		s.mu.Lock()
		s.ranges[r.Method+" "+r.URL.Path] = append(s.ranges[r.Method+" "+r.URL.Path], r.Header.Get("Range"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/octet-stream")
		if o.etag != "" {
			w.Header().Set("ETag", `"`+o.etag+`"`)
		}
		if from, to, ok := rangeOf(r.Header.Get("Range")); ok && o.size >= 0 && r.Header.Get("X-Fake-Ignore-Range") == "" {
			if from >= o.size {
				w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(o.size, 10))
				w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
				return
			}
			if to < 0 || to >= o.size {
				to = o.size - 1
			}
			o = s.rangeSource(key, o)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, o.size))
			w.Header().Set("Content-Length", strconv.FormatInt(to+1-from, 10))
			w.WriteHeader(http.StatusPartialContent)
			_ = o.writeTo(&skipWriter{w: w, skip: from, left: to + 1 - from})
			return
		}
		if o.size >= 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(o.size, 10))
		}
		_ = o.writeTo(w)
	case "PUT", "POST":
		s.storeUpload(w, r, key)
	default:
		w.WriteHeader(405)
	}
}

// rangeSource is o with its bytes in memory when it is generated as it is
// served: the ciphertext of a generated object is made from its first byte
// on, so each range of a large file would cost the whole object up to it.
// The last object asked for by range is kept (up to 512 MiB).
func (s *Server) rangeSource(key string, o *object) *object {
	if o.gen == nil || o.size < 0 || o.size > 512<<20 {
		return o
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	id := key + "\x00" + o.etag
	if s.cacheKey != id {
		var buf bytes.Buffer
		buf.Grow(int(o.size))
		if o.gen(&buf) != nil {
			return o
		}
		s.cacheKey, s.cacheData = id, buf.Bytes()
	}
	return &object{data: s.cacheData, size: o.size, etag: o.etag}
}

// rangeOf reads "bytes=N-" and "bytes=N-M" (to is -1 for the first).
func rangeOf(h string) (from, to int64, ok bool) {
	v, ok := strings.CutPrefix(h, "bytes=")
	a, b, dash := strings.Cut(v, "-")
	if !ok || !dash {
		return 0, 0, false
	}
	from, err := strconv.ParseInt(a, 10, 64)
	if err != nil || from < 0 {
		return 0, 0, false
	}
	if b == "" {
		return from, -1, true
	}
	to, err = strconv.ParseInt(b, 10, 64)
	return from, to, err == nil && to >= from
}

// skipWriter drops the first skip bytes written to it, then passes left
// bytes on and drops the rest.
type skipWriter struct {
	w    io.Writer
	skip int64
	left int64
}

func (s *skipWriter) Write(p []byte) (int, error) {
	n := len(p)
	if s.skip >= int64(n) {
		s.skip -= int64(n)
		return n, nil
	}
	p = p[s.skip:]
	s.skip = 0
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	if len(p) == 0 {
		return 0, errFaultDone // the range is sent: stop the generator
	}
	s.left -= int64(len(p))
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// Ranges lists the Range header of each store request of route (""
// for none), in order.
func (s *Server) Ranges(route string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges[route]...)
}

// SetETag gives the file's stored object a new ETag, as storing it again
// would: a resume must then start over.
func (f *File) SetETag(tag string) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	// A new object, not a change to the old one: a request being served
	// holds the old one without the lock.
	o := *f.s.objects[f.fileObject]
	o.etag = tag
	f.s.objects[f.fileObject] = &o
}

// Leaks counts store requests that carried the account token anywhere.
func (s *Server) Leaks() int { return s.RequestsWithPrefix("LEAK ") }

// QueryTokens counts requests, to the API or the store, that carried a
// token in the URL's query string, where proxies log it.
func (s *Server) QueryTokens() int { return s.RequestsWithPrefix("QUERYTOKEN ") }

func (s *Server) uploadURLs(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("count"))
	n = min(max(n, 0), 50)
	s.mu.Lock()
	defer s.mu.Unlock()
	urls := []apiclient.UploadURL{}
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("%d/%s", u.ID, uuid(s.random(16)))
		urls = append(urls, apiclient.UploadURL{ObjectKey: key, URL: s.presign(key)})
	}
	writeJSON(w, 200, map[string]any{"urls": urls})
}

// wedge is what museum's database holds after an exact repeat of PUT
// /files/thumbnail: repo.FileRepository.UpdateThumbnail returns on the
// duplicate object_copies insert without rolling back, and the request's
// context never ends (gin's Context.Done is nil without ContextWithFallback),
// so the transaction stays open with row locks on the file, its albums and
// the user's usage row until museum restarts. Writes that need those rows
// hang; reads do not (Postgres readers never wait on row locks).
type wedge struct {
	users, files, albums map[int64]bool
	release              chan struct{}
}

// albumsOf lists the albums that hold file id (museum's UPDATE of
// collection_files and collections rows); s.mu is held.
func (s *Server) albumsOf(id int64) []int64 {
	var out []int64
	for _, a := range s.collections {
		if a.entries[id] != nil {
			out = append(out, a.ID)
		}
	}
	return out
}

// blocked reports whether a thumbnail commit by u for file id needs rows
// the wedge holds; s.mu is held.
func (w *wedge) blocked(s *Server, u *User, id int64) bool {
	if w == nil {
		return false
	}
	if w.users[u.ID] || w.files[id] {
		return true
	}
	for _, a := range s.albumsOf(id) {
		if w.albums[a] {
			return true
		}
	}
	return false
}

// Restart ends a wedge as restarting museum would: its transaction rolls
// back and every write waiting on it goes ahead.
func (s *Server) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wedged != nil {
		close(s.wedged.release)
		s.wedged = nil
	}
}

// ExactRepeats counts PUT /files/thumbnail calls that repeated an object
// key already committed: each wedges museum until it restarts.
func (s *Server) ExactRepeats() int { return s.Requests("EXACT REPEAT PUT /files/thumbnail") }

// Hung counts writes that found museum wedged and waited.
func (s *Server) Hung() int { return s.Requests("HUNG PUT /files/thumbnail") }

// updateThumbnail follows museum's rules (FileController.UpdateThumbnail
// and repo.FileRepository.UpdateThumbnail, a621d73): the key must be the
// caller's (400), the file must exist (404), be the caller's (403) and have
// a thumbnail row (404); the new object must be in the store (500) and no
// larger than the existing thumbnail object as object_keys records it
// (500). Success records the new object's size in object_keys, not in
// files.info (whose thumbSize keeps the upload's size), bumps the file
// everywhere and deletes the old object. An exact repeat (a key already
// committed) answers 500 and wedges museum: later thumbnail commits by the
// same user, for the same file or for a file in one of its albums hang
// until Restart or until the client gives up.
func (s *Server) updateThumbnail(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	var in struct {
		FileID    int64 `json:"fileID"`
		Thumbnail struct {
			ObjectKey        string        `json:"objectKey"`
			DecryptionHeader apiclient.B64 `json:"decryptionHeader"`
		} `json:"thumbnail"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	if !s.lockUnwedged(r, u, in.FileID) {
		return
	}
	defer s.mu.Unlock()
	key := in.Thumbnail.ObjectKey
	f := s.files[in.FileID]
	switch {
	case !strings.HasPrefix(key, fmt.Sprintf("%d/", u.ID)):
		apiErr(w, 400, "BAD_REQUEST", "object key does not belong to the user")
	case f == nil:
		apiErr(w, 404, "", "")
	case f.Owner != u:
		apiErr(w, 403, "", "")
	case f.thumbObject == "":
		apiErr(w, 404, "", "")
	case s.objects[key] == nil:
		apiErr(w, 500, "", "") // HEAD on the object fails
	case s.objects[key].size > f.thumbRecorded:
		apiErr(w, 500, "", "") // new thumbnail larger than existing thumbnail
	case s.usedThumbs[key]:
		// The duplicate object_copies insert: 500, transaction left open.
		s.counts["EXACT REPEAT PUT /files/thumbnail"]++
		s.wedge(u, f)
		apiErr(w, 500, "", "")
	default:
		s.usedThumbs[key] = true
		if key != f.thumbObject {
			delete(s.objects, f.thumbObject)
		}
		f.thumbObject = key
		f.thumbRecorded = s.objects[key].size
		f.thumbHeader = bytes.Clone(in.Thumbnail.DecryptionHeader)
		f.touch()
		w.WriteHeader(200)
	}
}

// lockUnwedged takes s.mu once no wedged transaction holds u's file
// fileID (a request waiting for one hangs, as museum's does, until the
// wedge is released or the request is cancelled). It reports false,
// without the lock, when the request was cancelled first.
func (s *Server) lockUnwedged(r *http.Request, u *User, fileID int64) bool {
	s.mu.Lock()
	for s.wedged.blocked(s, u, fileID) {
		release := s.wedged.release
		s.counts["HUNG PUT /files/thumbnail"]++
		s.mu.Unlock()
		select {
		case s.Stalled <- "HUNG PUT /files/thumbnail":
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return false
		}
		s.mu.Lock()
	}
	return true
}

// wedge leaves a transaction open on f, as museum's failed duplicate
// insert does: writes that need the rows of u's usage, f or f's albums
// hang. The caller holds s.mu.
func (s *Server) wedge(u *User, f *File) {
	if s.wedged == nil {
		s.wedged = &wedge{users: map[int64]bool{}, files: map[int64]bool{}, albums: map[int64]bool{}, release: make(chan struct{})}
	}
	s.wedged.users[u.ID] = true
	s.wedged.files[f.ID] = true
	for _, a := range s.albumsOf(f.ID) {
		s.wedged.albums[a] = true
	}
}
