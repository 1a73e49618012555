package enteapitest

import (
	"errors"
	"net/http"

	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// The /files routes but uploads: downloads and previews, file sizes, and
// thumbnail repairs.

func (s *Server) fileRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /files/download/{id}", s.authed(s.redirectObject(false)))
	mux.HandleFunc("GET /files/preview/{id}", s.authed(s.redirectObject(true)))
	mux.HandleFunc("POST /files/info", s.authed(s.filesInfo))
	mux.HandleFunc("PUT /files/thumbnail", s.authed(s.updateThumbnail))
	mux.HandleFunc("GET /files/large-thumbnails", s.authed(s.largeThumbnails))
}

// redirectObject answers a download (or, thumb, a preview) as museum
// does: a 307 with a short HTML page of the link (504 bytes on museum,
// Content-Length set); a client that closes it unread loses the
// connection.
func (s *Server) redirectObject(thumb bool) accountHandler {
	return func(w http.ResponseWriter, r *http.Request, u *User) {
		id, _ := pathID(r)
		key, elsewhere, err := s.m.Download(u, id, thumb)
		switch {
		case err != nil:
			writeErr(w, err)
		case elsewhere != "":
			w.Header().Set("Location", elsewhere)
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			http.Redirect(w, r, s.presign(key), http.StatusTemporaryRedirect)
		}
	}
}

// presign is a presigned-looking URL of key on the fake object store.
func (s *Server) presign(key string) string {
	return s.Store.URL + "/store/" + key + "?X-Amz-Expires=604800&X-Amz-Signature=fakesignature"
}

// filesInfo answers POST /files/info: museum's ente.FilesInfoResponse.
func (s *Server) filesInfo(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		FileIDs []int64 `json:"fileIDs"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	sizes, err := s.m.FilesInfo(u, in.FileIDs)
	if err != nil {
		writeErr(w, err)
		return
	}
	out := []wire.FileInfoResponse{}
	for _, f := range sizes {
		out = append(out, wire.FileInfoResponse{ID: f.ID, FileInfo: wire.FileInfo{FileSize: f.FileSize, ThumbSize: f.ThumbSize}})
	}
	writeJSON(w, 200, map[string]any{"filesInfo": out})
}

// largeThumbnails answers GET /files/large-thumbnails?threshold=N (a
// missing threshold is 0).
func (s *Server) largeThumbnails(w http.ResponseWriter, r *http.Request, u *User) {
	threshold, _ := qint(r, "threshold")
	writeJSON(w, 200, map[string]any{"largeThumbnailFiles": s.m.LargeThumbnails(u, threshold)})
}

// updateThumbnail answers PUT /files/thumbnail: 200 with no body, or the
// model's refusal; a request that hangs on a wedged museum and is
// cancelled gets no answer.
func (s *Server) updateThumbnail(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		FileID    int64 `json:"fileID"`
		Thumbnail struct {
			ObjectKey        string `json:"objectKey"`
			DecryptionHeader string `json:"decryptionHeader"`
		} `json:"thumbnail"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	err := s.m.UpdateThumbnail(r.Context(), u, in.FileID, in.Thumbnail.ObjectKey, lenient(in.Thumbnail.DecryptionHeader))
	switch {
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
	case err != nil:
		writeErr(w, err)
	default:
		w.WriteHeader(200)
	}
}
