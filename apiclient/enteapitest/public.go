package enteapitest

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// A public link's reader's routes, /public-collection/* (PL.3–PL.6): no
// account, the link's own credentials.

func (s *Server) publicRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+model.LinkInfoRoute, s.linked(s.linkInfo))
	mux.HandleFunc("GET "+model.LinkDiffRoute, s.linked(s.linkDiff))
	mux.HandleFunc("GET /public-collection/files/download/{id}", s.linked(s.linkObject(false)))
	mux.HandleFunc("GET /public-collection/files/preview/{id}", s.linked(s.linkObject(true)))
	mux.HandleFunc("POST "+model.LinkPasswordRoute, s.linked(s.linkVerifyPassword))
}

// linkHandler serves a link's request.
type linkHandler func(w http.ResponseWriter, r *http.Request, lr *model.LinkRequest)

// linked reads a link's credentials as museum's CollectionLinkMiddleware
// does, each from its header or its query parameter (PL.3): no access
// token is 401 at once (PL.4); the model judges the rest.
func (s *Server) linked(h linkHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		either := func(header, query string) string {
			if v := r.Header.Get(header); v != "" {
				return v
			}
			return q.Get(query)
		}
		lr := &model.LinkRequest{Path: r.URL.Path, AccessToken: either("X-Auth-Access-Token", "accessToken"),
			JWT: either("X-Auth-Access-Token-JWT", "accessTokenJWT"), DeviceToken: r.Header.Get("X-Auth-Link-Device-Token"),
			IP: clientIP(r), UserAgent: r.UserAgent(), Origin: r.Header.Get("Origin")}
		if lr.AccessToken == "" {
			writeJSON(w, 401, map[string]string{"error": "missing accessToken", "context": "album_link"})
			return
		}
		h(w, r, lr)
	}
}

// clientIP is gin's ClientIP with every proxy trusted, museum's default:
// the first address of X-Forwarded-For, else X-Real-IP, else the peer
// (PL.5).
func clientIP(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		if first := strings.TrimSpace(strings.Split(xff, ",")[0]); net.ParseIP(first) != nil {
			return first
		}
	}
	if xr := strings.TrimSpace(r.Header.Get("X-Real-IP")); net.ParseIP(xr) != nil {
		return xr
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr) // net/http's is always host:port
	return host
}

// linkInfo answers with the album and the link's settings, and the device
// token minted in X-Ente-Link-Device-Token.
func (s *Server) linkInfo(w http.ResponseWriter, _ *http.Request, lr *model.LinkRequest) {
	c, settings, minted, err := s.m.LinkInfo(lr)
	if err != nil {
		writeErr(w, err)
		return
	}
	if minted != "" {
		w.Header().Set("X-Ente-Link-Device-Token", minted)
	}
	col := collectionJSON(c)
	col.Sharees, col.PublicURLs = nil, []wire.PublicURL{linkJSON(settings)}
	writeJSON(w, 200, map[string]any{"collection": col, "referralCode": "FAKE42"})
}

func (s *Server) linkDiff(w http.ResponseWriter, r *http.Request, lr *model.LinkRequest) {
	raw := r.URL.Query().Get("sinceTime")
	since, err := strconv.ParseInt(raw, 10, 64)
	page, more, err := s.m.LinkDiff(lr, since, err == nil, raw)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, wire.Diff{Diff: filesJSON(page), HasMore: more})
}

func (s *Server) linkObject(thumb bool) linkHandler {
	return func(w http.ResponseWriter, r *http.Request, lr *model.LinkRequest) {
		id, ok := pathID(r)
		key, err := s.m.LinkObject(lr, id, ok, thumb)
		if err != nil {
			writeErr(w, err)
			return
		}
		http.Redirect(w, r, s.presign(key), http.StatusTemporaryRedirect)
	}
}

func (s *Server) linkVerifyPassword(w http.ResponseWriter, r *http.Request, lr *model.LinkRequest) {
	var in struct {
		PassHash string `json:"passHash"`
	}
	ok := readJSON(r, &in)
	jwt, err := s.m.LinkVerifyPassword(lr, in.PassHash, ok)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]string{"jwtToken": jwt})
}
