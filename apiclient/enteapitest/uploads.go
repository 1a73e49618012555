package enteapitest

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// The upload routes (UP.1–UP.11): upload URLs, and POST
// /files, the commit. The object store's side is store.go.

func (s *Server) uploadRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /files/upload-urls", s.authed(s.guarded(true, s.uploadURLs)))
	mux.HandleFunc("POST /files/upload-url", s.authed(s.guarded(false, s.uploadURL)))
	mux.HandleFunc("POST /files/multipart-upload-url", s.authed(s.guarded(false, s.multipartUploadURL)))
	mux.HandleFunc("GET /files/multipart-upload-urls", s.authed(s.guarded(true, s.plainMultipartUploadURLs)))
	mux.HandleFunc("POST /files", s.authed(s.createFile))
}

// guarded puts museum's guard of an upload-URL route before h: its rate
// limit, and for a route that knows no size (checkPlan), the plan.
func (s *Server) guarded(checkPlan bool, h accountHandler) accountHandler {
	return func(w http.ResponseWriter, r *http.Request, u *User) {
		if err := s.m.UploadGuard(u, r.URL.Path, checkPlan); err != nil {
			writeErr(w, err)
			return
		}
		h(w, r, u)
	}
}

func (s *Server) uploadURLs(w http.ResponseWriter, r *http.Request, u *User) {
	n, _ := strconv.Atoi(r.URL.Query().Get("count"))
	urls := []wire.UploadURL{}
	for _, key := range s.m.UploadURLs(u, n) {
		urls = append(urls, wire.UploadURL{ObjectKey: key, URL: s.presign(key)})
	}
	writeJSON(w, 200, map[string]any{"urls": urls})
}

func (s *Server) uploadURL(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		ContentLength int64  `json:"contentLength"`
		ContentMD5    string `json:"contentMD5"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	key, err := s.m.UploadURL(u, in.ContentLength, in.ContentMD5)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, wire.UploadURL{ObjectKey: key, URL: s.presign(key)})
}

// multipartUploadURL answers with museum's MultipartUploadURLs, with no
// "urls" wrapper.
func (s *Server) multipartUploadURL(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		ContentLength int64    `json:"contentLength"`
		PartLength    int64    `json:"partLength"`
		PartMD5s      []string `json:"partMd5s"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	mu, err := s.m.MultipartUploadURL(u, in.ContentLength, in.PartLength, in.PartMD5s)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, s.multipartURLs(mu))
}

// plainMultipartUploadURLs answers GET /files/multipart-upload-urls?count
// with museum's MultipartUploadURLs under "urls": part URLs that pin
// neither length nor checksum.
func (s *Server) plainMultipartUploadURLs(w http.ResponseWriter, r *http.Request, u *User) {
	n, _ := strconv.Atoi(r.URL.Query().Get("count")) // not a number: 0, refused
	mu, err := s.m.PlainMultipartUploadURLs(u, n)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]any{"urls": s.multipartURLs(mu)})
}

// multipartURLs are the store's URLs of a multipart upload minted.
func (s *Server) multipartURLs(mu model.MultipartUpload) wire.MultipartUploadURLs {
	out := wire.MultipartUploadURLs{ObjectKey: mu.Key,
		CompleteURL: s.Store.URL + "/store/" + mu.Key + "?uploadId=" + mu.ID + "&X-Amz-Signature=fakesignature"}
	for i := range mu.Parts {
		out.PartURLs = append(out.PartURLs, fmt.Sprintf("%s/store/%s?partNumber=%d&uploadId=%s&X-Amz-Signature=fakesignature",
			s.Store.URL, mu.Key, i+1, mu.ID))
	}
	return out
}

// createFile answers POST /files: gin's binding first (400; an id is PUT
// /files/update's business, which the fake leaves out), then the model's
// rules; the answer is museum's: the body sent, with the id, owner, sizes,
// info and updationTime filled in.
func (s *Server) createFile(w http.ResponseWriter, r *http.Request, u *User) {
	var in wire.File
	if !readJSON(r, &in) || in.ID != 0 {
		writeJSON(w, 400, struct{}{})
		return
	}
	nf := newFile(&in)
	if !nf.Bound() {
		writeJSON(w, 400, struct{}{})
		return
	}
	c, err := s.m.CreateFile(u, nf)
	if err != nil {
		writeErr(w, err)
		return
	}
	out := in
	out.ID, out.OwnerID, out.CollectionOwnerID, out.IsDeleted, out.UpdationTime = c.ID, u.ID, nil, false, c.UpdationTime
	out.File.Size, out.Thumbnail.Size, out.Metadata.Size = c.FileSize, c.ThumbSize, 0
	out.Info = &wire.FileInfo{FileSize: c.FileSize, ThumbSize: c.ThumbSize}
	writeJSON(w, 200, out)
}

// newFile is a POST /files body as museum binds it.
func newFile(in *wire.File) *model.NewFile {
	part := func(a wire.FileAttributes) model.UploadedPart {
		return model.UploadedPart{ObjectKey: a.ObjectKey, EncryptedData: a.EncryptedData, DecryptionHeader: a.DecryptionHeader, Size: a.Size}
	}
	return &model.NewFile{CollectionID: in.CollectionID, EncryptedKey: in.EncryptedKey, KeyDecryptionNonce: in.KeyDecryptionNonce,
		File: part(in.File), Thumbnail: part(in.Thumbnail), Metadata: part(in.Metadata),
		MagicMetadata: sentMagic(in.MagicMetadata), PubMagicMetadata: sentMagic(in.PubMagicMetadata)}
}
