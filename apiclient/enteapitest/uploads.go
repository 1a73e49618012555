package enteapitest

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"weak"

	"github.com/quak-photos/quak/apiclient"
)

// Uploads as museum and its object store take them (docs/protocol.md
// UP.1–UP.11, checked against museum a621d73 with MinIO). The fake checks
// no crypto, as museum does not: junk keys, headers and metadata are
// stored as sent (UP.4).

// uploads is the fake's upload state: URLs minted, multipart uploads under
// way, what POST /files and POST /collections stored, plans and rate
// windows. It is guarded by the Server's mu.
type uploads struct {
	pins      map[string]pin                     // object key → its checksummed URL's length and MD5
	multipart map[string]*multipart              // upload id → a multipart upload not yet completed
	commits   map[int64]*commit                  // file id → the POST /files body it was made from
	byObject  map[string]int64                   // object key → the file committed with it
	albums    map[int64]*apiclient.NewCollection // album id → what POST /collections stored
	magic     map[int64]*apiclient.MagicMetadata // file id → private magic metadata sent at commit
	plans     map[int64]*plan
	limits    map[windowKey]*window
}

// allUploads holds each Server's uploads, keyed weakly so that a Server
// nobody uses any more is freed with its objects, and made on first use:
// the many tests that never upload pay nothing.
var allUploads sync.Map // weak.Pointer[Server] → *uploads

// up returns s's upload state.
func (s *Server) up() *uploads {
	k := weak.Make(s)
	if v, ok := allUploads.Load(k); ok {
		return v.(*uploads)
	}
	v, loaded := allUploads.LoadOrStore(k, &uploads{
		pins: map[string]pin{}, multipart: map[string]*multipart{}, commits: map[int64]*commit{},
		byObject: map[string]int64{}, albums: map[int64]*apiclient.NewCollection{},
		magic: map[int64]*apiclient.MagicMetadata{}, plans: map[int64]*plan{}, limits: map[windowKey]*window{},
	})
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[Server]) { allUploads.Delete(k) }, k)
	}
	return v.(*uploads)
}

// upIfAny returns s's upload state, or nil before anything was uploaded.
func (s *Server) upIfAny() *uploads {
	if v, ok := allUploads.Load(weak.Make(s)); ok {
		return v.(*uploads)
	}
	return nil
}

// pin is what a checksummed URL signs: the body's length and its MD5 as
// base64 (UP.2).
type pin struct {
	size int64
	md5  string
}

// multipart is a multipart upload: the object it makes, each part's pin,
// and the parts stored so far.
type multipart struct {
	key   string
	parts []pin
	got   map[int][]byte
}

// Upload steps on the object store, for InjectUpload: their routes carry
// object keys a test cannot know before the client mints them.
const (
	StepPut      = "PUT object"    // a whole object to its upload URL
	StepPart     = "PUT part"      // one part of a multipart upload
	StepComplete = "POST complete" // a multipart upload's completion
)

// InjectUpload queues faults for the next requests of an upload step, as
// Inject does for a route: Status refuses the request unapplied,
// LoseResponse applies it and drops the answer, CutAfter cuts the answer.
// API routes such as "POST /files" take Inject directly.
func (s *Server) InjectUpload(step string, faults ...Fault) {
	s.Inject("UPLOAD "+step, faults...)
}

// storeUpload serves the store's writes: a PUT of an object or a part, a
// POST completing a multipart upload. Faults queued by InjectUpload apply
// first.
func (s *Server) storeUpload(w http.ResponseWriter, r *http.Request, key string) {
	q := r.URL.Query()
	step, h := StepPut, s.putObject
	switch {
	case r.Method == "POST":
		step, h = StepComplete, s.completeUpload
	case q.Has("uploadId"):
		step, h = StepPart, s.putPart
	}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, key) })
	s.mu.Lock()
	f, ok := s.nextFault("UPLOAD " + step)
	s.mu.Unlock()
	if ok {
		s.applyFault(w, r, f, serve)
		return
	}
	serve(w, r)
}

// storeErr answers in S3's XML error shape.
func storeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<Error><Code>%s</Code><Message>%s</Message></Error>", code, msg)
}

// checkPin answers what MinIO answers a PUT that breaks its URL's pin,
// and reports whether it did (UP.2): a Content-MD5 that is not one 400
// InvalidDigest, none 400 AccessDenied, another length or MD5 than signed
// 403 SignatureDoesNotMatch. A pin of size -1 signs nothing.
func checkPin(w http.ResponseWriter, r *http.Request, p pin) bool {
	sum := r.Header.Get("Content-MD5")
	if b, err := base64.StdEncoding.DecodeString(sum); sum != "" && (err != nil || len(b) != md5.Size) {
		storeErr(w, 400, "InvalidDigest", "The Content-Md5 you specified is not valid.")
		return true
	}
	switch {
	case p.size < 0:
		return false
	case sum == "":
		storeErr(w, 400, "AccessDenied", "There were headers present in the request which were not signed")
		return true
	case sum != p.md5 || r.ContentLength != p.size:
		storeErr(w, 403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
		return true
	}
	return false
}

// readPut reads a PUT's body and checks it against its Content-MD5 (400
// BadDigest, UP.2), and reports whether it may be stored.
func readPut(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxFileSize))
	if err != nil {
		storeErr(w, 400, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
		return nil, false
	}
	if want := r.Header.Get("Content-MD5"); want != "" {
		sum := md5.Sum(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			storeErr(w, 400, "BadDigest", "The Content-Md5 you specified did not match what we received.")
			return nil, false
		}
	}
	return body, true
}

// putObject stores a whole object. A checksummed URL takes only its
// bytes; a plain one (GET /files/upload-urls) takes anything, and keeps
// doing so after POST /files: a second PUT replaces a committed object,
// museum never notices, and downloads serve the new bytes (UP.2's
// overwrite hole).
func (s *Server) putObject(w http.ResponseWriter, r *http.Request, key string) {
	s.mu.Lock()
	p, pinned := s.up().pins[key]
	s.mu.Unlock()
	if !pinned {
		p = pin{size: -1}
	}
	if checkPin(w, r, p) {
		return
	}
	body, ok := readPut(w, r)
	if !ok {
		return
	}
	sum := md5.Sum(body)
	etag := hex.EncodeToString(sum[:])
	s.mu.Lock()
	s.objects[key] = &object{data: body, size: int64(len(body)), etag: etag}
	s.mu.Unlock()
	w.Header().Set("ETag", `"`+etag+`"`)
	w.WriteHeader(200)
}

// putPart stores one part of a multipart upload, pinned as a whole
// object's URL is; a completed upload's parts answer 404 NoSuchUpload
// (UP.2).
func (s *Server) putPart(w http.ResponseWriter, r *http.Request, key string) {
	q := r.URL.Query()
	n, _ := strconv.Atoi(q.Get("partNumber"))
	s.mu.Lock()
	mp := s.up().multipart[q.Get("uploadId")]
	s.mu.Unlock()
	switch {
	case mp == nil || mp.key != key:
		storeErr(w, 404, "NoSuchUpload", "The specified multipart upload does not exist.")
		return
	case n < 1 || n > len(mp.parts):
		storeErr(w, 403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
		return
	}
	if checkPin(w, r, mp.parts[n-1]) {
		return
	}
	body, ok := readPut(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	mp.got[n] = body
	s.mu.Unlock()
	sum := md5.Sum(body)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	w.WriteHeader(200)
}

// minPart is S3's smallest part but the last.
const minPart = 5 << 20

// completeUpload joins the parts listed, as S3's CompleteMultipartUpload
// (UP.2): at least one part, in ascending order, each uploaded with that
// ETag (400 InvalidRequest, InvalidPartOrder, InvalidPart); the parts'
// pins keep all but the last at 5 MiB or more. The object is what the listed
// parts make, even if parts were left out. It cannot be repeated: the
// upload is gone, and a second completion answers 404 NoSuchUpload.
func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request, key string) {
	var in struct {
		Parts []struct {
			Number int    `xml:"PartNumber"`
			ETag   string `xml:"ETag"`
		} `xml:"Part"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := xml.Unmarshal(body, &in); err != nil {
		storeErr(w, 400, "MalformedXML", "The XML you provided was not well-formed.")
		return
	}
	id := r.URL.Query().Get("uploadId")
	s.mu.Lock()
	defer s.mu.Unlock()
	mp := s.up().multipart[id]
	if mp == nil || mp.key != key {
		storeErr(w, 404, "NoSuchUpload", "The specified multipart upload does not exist.")
		return
	}
	if len(in.Parts) == 0 {
		storeErr(w, 400, "InvalidRequest", "You must specify at least one part")
		return
	}
	var data, sums []byte
	for i, p := range in.Parts {
		part, ok := mp.got[p.Number]
		sum := md5.Sum(part)
		switch {
		case i > 0 && p.Number <= in.Parts[i-1].Number:
			storeErr(w, 400, "InvalidPartOrder", "The list of parts was not in ascending order.")
			return
		case !ok || strings.Trim(p.ETag, `"`) != hex.EncodeToString(sum[:]):
			storeErr(w, 400, "InvalidPart", "One or more of the specified parts could not be found.")
			return
		}
		data = append(data, part...)
		sums = append(sums, sum[:]...)
	}
	// As the store: the list's order and its parts first, then their sizes.
	numbers := make([]int, len(in.Parts))
	for i, p := range in.Parts {
		numbers[i] = p.Number
	}
	if partsTooSmall(mp, numbers) {
		storeErr(w, 400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.")
		return
	}
	all := md5.Sum(sums)
	etag := fmt.Sprintf("%s-%d", hex.EncodeToString(all[:]), len(in.Parts))
	s.objects[key] = &object{data: data, size: int64(len(data)), etag: etag}
	delete(s.up().multipart, id)
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Location>%s/store/%s</Location>`+
		`<Bucket>store</Bucket><Key>%s</Key><ETag>&#34;%s&#34;</ETag></CompleteMultipartUploadResult>`, s.Store.URL, key, key, etag)
}

// uploadRoute guards an upload-URL route: the caller's token, then
// museum's 500 a minute per user and route (429 with no Retry-After,
// UP.2), then, for a route that knows no size, the plan (402/426, UP.10).
func (s *Server) uploadRoute(checkPlan bool, h func(http.ResponseWriter, *http.Request, *User)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.authUser(w, r)
		if !ok {
			return
		}
		s.mu.Lock()
		limited := s.rateLimited(u, r.URL.Path)
		status := 0
		if !limited && checkPlan {
			status = s.canUpload(u, nil)
		}
		s.mu.Unlock()
		switch {
		case limited:
			s.applyFault(w, r, RateLimited(), nil)
		case status != 0:
			refuseUpload(w, status)
		default:
			h(w, r, u)
		}
	}
}

// normalizeMD5 reads a contentMD5 as museum does: 16 bytes in base64.
// museum falls back to hex, but every 32-digit hex string is also valid
// base64 of 24 bytes, and other hex strings are not 16 bytes: hex is
// always refused (UP.2).
func normalizeMD5(v string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	return base64.StdEncoding.EncodeToString(b), err == nil && len(b) == md5.Size
}

// mintKey makes a new object key of u's, as museum names them.
func (s *Server) mintKey(u *User) string {
	return fmt.Sprintf("%d/%s", u.ID, uuid(s.random(16)))
}

// uploadURL answers POST /files/upload-url (UP.2): both fields required, a
// length from 1 byte to 10 GiB, a base64 MD5 (400 otherwise), then the
// plan with that size; the URL pins both.
func (s *Server) uploadURL(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		ContentLength int64  `json:"contentLength"`
		ContentMD5    string `json:"contentMD5"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	sum, ok := normalizeMD5(in.ContentMD5)
	if in.ContentLength <= 0 || in.ContentLength > MaxFileSize || !ok {
		apiErr(w, 400, "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status := s.canUpload(u, &in.ContentLength); status != 0 {
		refuseUpload(w, status)
		return
	}
	key := s.mintKey(u)
	s.up().pins[key] = pin{size: in.ContentLength, md5: sum}
	writeJSON(w, 200, apiclient.UploadURL{ObjectKey: key, URL: s.presign(key)})
}

// multipartUploadURL answers POST /files/multipart-upload-url (UP.2):
// parts = ceil(contentLength/partLength) = len(partMd5s), parts of at
// least 5 MiB when there are several and at most 5 GiB each, 10 GiB in
// total (400 otherwise), then the plan without a size. The
// answer has no "urls" wrapper; each part's URL pins its length and MD5.
func (s *Server) multipartUploadURL(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		ContentLength int64    `json:"contentLength"`
		PartLength    int64    `json:"partLength"`
		PartMD5s      []string `json:"partMd5s"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	parts, ok := partPins(in.ContentLength, in.PartLength, in.PartMD5s)
	if !ok {
		apiErr(w, 400, "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status := s.canUpload(u, nil); status != 0 {
		refuseUpload(w, status)
		return
	}
	key, id := s.mintKey(u), hex.EncodeToString(s.random(16))
	s.up().multipart[id] = &multipart{key: key, parts: parts, got: map[int][]byte{}}
	out := apiclient.MultipartUpload{ObjectKey: key,
		CompleteURL: s.Store.URL + "/store/" + key + "?uploadId=" + id + "&X-Amz-Signature=fakesignature"}
	for i := range parts {
		out.PartURLs = append(out.PartURLs, fmt.Sprintf("%s/store/%s?partNumber=%d&uploadId=%s&X-Amz-Signature=fakesignature",
			s.Store.URL, key, i+1, id))
	}
	writeJSON(w, 200, out)
}

// partPins checks a multipart request as museum does and returns each
// part's pin.
func partPins(size, partLength int64, sums []string) ([]pin, bool) {
	if size <= 0 || size > MaxFileSize || len(sums) == 0 || partLength <= 0 || partLength > 5<<30 ||
		(size > partLength && partLength < minPart) {
		return nil, false
	}
	// At most 2,048 parts fit these bounds: museum's cap of 10,000 never bites.
	if int64(len(sums)) != (size+partLength-1)/partLength {
		return nil, false
	}
	pins := make([]pin, len(sums))
	left := size
	for i, v := range sums {
		sum, ok := normalizeMD5(v)
		if !ok {
			return nil, false
		}
		pins[i] = pin{size: min(partLength, left), md5: sum}
		left -= pins[i].size
	}
	return pins, true
}

// PendingUploads counts multipart uploads minted and not completed.
func (s *Server) PendingUploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.up().multipart)
}

// Album returns the album of that id, made by a test or through the API.
func (s *Server) Album(id int64) *Album {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.collections[id]
}

// File returns the file of that id, made by a test or through the API.
func (s *Server) File(id int64) *File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.files[id]
}

// PlaceObject puts an object of size zero bytes under key, as if it had
// been uploaded, generated as it is read: for tests of sizes no test can
// send, such as museum's 10 GiB limit.
func (s *Server) PlaceObject(key string, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = &object{size: size, gen: func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(zeros{}, size))
		return err
	}}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Object returns the bytes stored under key, and false when there are none.
func (s *Server) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[key]
	if o == nil || o.lost || o.gen != nil {
		return nil, false
	}
	return bytes.Clone(o.data), true
}
