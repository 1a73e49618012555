package enteapitest

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
)

// The object store (S3, MinIO behind museum): GETs of objects by their
// presigned URLs, with Range, and the PUTs and POSTs of uploads
// (UP.2).

func (s *Server) serveStore(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, "/store/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("X-Auth-Token") != "" || strings.Contains(r.Header.Get("Referer"), "token=") || r.URL.Query().Has("token") {
		// The object store must never see the account token.
		s.counts.add("LEAK " + r.URL.Path)
	}
	switch r.Method {
	case "GET":
		s.getObject(w, r, key)
	case "PUT", "POST":
		s.storeUpload(w, r, key)
	default:
		w.WriteHeader(405)
	}
}

// getObject serves an object, or the range asked for: 206 with
// Content-Range, 416 with bytes */size past its end; a missing object is
// S3's 404 NoSuchKey.
func (s *Server) getObject(w http.ResponseWriter, r *http.Request, key string) {
	o := s.m.StoreGet(key)
	if o == nil {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(404)
		fmt.Fprintf(w, "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>%s</Key></Error>", key)
		return
	}
	s.counts.addRange(r.Method+" "+r.URL.Path, r.Header.Get("Range"))
	w.Header().Set("Content-Type", "application/octet-stream")
	if o.ETag() != "" {
		w.Header().Set("ETag", `"`+o.ETag()+`"`)
	}
	size := o.Size()
	if from, to, ok := rangeOf(r.Header.Get("Range")); ok && size >= 0 && r.Header.Get("X-Fake-Ignore-Range") == "" {
		if from >= size {
			w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		if to < 0 || to >= size {
			to = size - 1
		}
		o = s.m.ForRange(key, o)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, size))
		w.Header().Set("Content-Length", strconv.FormatInt(to+1-from, 10))
		w.WriteHeader(http.StatusPartialContent)
		_ = o.Write(&skipWriter{w: w, skip: from, left: to + 1 - from})
		return
	}
	if size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	_ = o.Write(w)
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

// errRangeSent stops an object's generator once its range is sent.
var errRangeSent = errors.New("enteapitest: range sent")

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
		return 0, errRangeSent
	}
	s.left -= int64(len(p))
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
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
	step, h := StepPut, s.putObject
	switch {
	case r.Method == "POST":
		step, h = StepComplete, s.completeUpload
	case r.URL.Query().Has("uploadId"):
		step, h = StepPart, s.putPart
	}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(w, r, key) })
	if f, ok := s.faults.next("UPLOAD " + step); ok {
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

// writeStoreErr answers a store error of the model's.
func writeStoreErr(w http.ResponseWriter, err error) {
	var se *model.StoreError
	if errors.As(err, &se) {
		storeErr(w, se.Status, se.Code, se.Message)
		return
	}
	storeErr(w, 500, "InternalError", err.Error())
}

// checkPin answers what MinIO answers a PUT that breaks its URL's pin,
// and reports whether it did (UP.2): a Content-MD5 that is not one 400
// InvalidDigest, none 400 AccessDenied, another length or MD5 than signed
// 403 SignatureDoesNotMatch. A pin of size -1 signs nothing.
func checkPin(w http.ResponseWriter, r *http.Request, p model.Pin) bool {
	sum := r.Header.Get("Content-MD5")
	if b, err := base64.StdEncoding.DecodeString(sum); sum != "" && (err != nil || len(b) != md5.Size) {
		storeErr(w, 400, "InvalidDigest", "The Content-Md5 you specified is not valid.")
		return true
	}
	switch {
	case p.Size < 0:
		return false
	case sum == "":
		storeErr(w, 400, "AccessDenied", "There were headers present in the request which were not signed")
		return true
	case sum != p.MD5 || r.ContentLength != p.Size:
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
	if checkPin(w, r, s.m.PinOf(key)) {
		return
	}
	body, ok := readPut(w, r)
	if !ok {
		return
	}
	sum := md5.Sum(body)
	etag := hex.EncodeToString(sum[:])
	s.m.StorePut(key, body, etag)
	w.Header().Set("ETag", `"`+etag+`"`)
	w.WriteHeader(200)
}

// putPart stores one part of a multipart upload, pinned as a whole
// object's URL is; a completed upload's parts answer 404 NoSuchUpload
// (UP.2).
func (s *Server) putPart(w http.ResponseWriter, r *http.Request, key string) {
	q := r.URL.Query()
	n, _ := strconv.Atoi(q.Get("partNumber"))
	p, err := s.m.PartPin(q.Get("uploadId"), key, n)
	if err != nil {
		writeStoreErr(w, err)
		return
	}
	if checkPin(w, r, p) {
		return
	}
	body, ok := readPut(w, r)
	if !ok {
		return
	}
	s.m.PutPart(q.Get("uploadId"), n, body)
	sum := md5.Sum(body)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	w.WriteHeader(200)
}

// completeUpload joins the parts listed, as S3's CompleteMultipartUpload
// (UP.2, the model's CompleteUpload), and answers S3's result.
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
	parts := make([]model.CompletedPart, len(in.Parts))
	for i, p := range in.Parts {
		parts[i] = model.CompletedPart{Number: p.Number, ETag: p.ETag}
	}
	etag, err := s.m.CompleteUpload(r.URL.Query().Get("uploadId"), key, parts)
	if err != nil {
		writeStoreErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Location>%s/store/%s</Location>`+
		`<Bucket>store</Bucket><Key>%s</Key><ETag>&#34;%s&#34;</ETag></CompleteMultipartUploadResult>`, s.Store.URL, key, key, etag)
}
