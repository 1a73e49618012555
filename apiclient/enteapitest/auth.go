package enteapitest

import (
	"net/http"
	"strings"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// accountHandler serves a request of an account's, u's.
type accountHandler func(w http.ResponseWriter, r *http.Request, u *User)

// authed is the one auth wrapper of every account route, museum's
// AuthMiddleware: the token from X-Auth-Token or ?token=, valid under the
// app of the request's X-Client-Package, else 401 in the middleware's
// shape.
func (s *Server) authed(h accountHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("X-Auth-Token")
		if tok == "" {
			tok = r.URL.Query().Get("token")
		}
		if tok == "" {
			writeJSON(w, http.StatusUnauthorized, wire.MiddlewareError{Error: "missing token"})
			return
		}
		u := s.m.TokenUser(tok, appOf(r))
		if u == nil {
			writeJSON(w, http.StatusUnauthorized, wire.MiddlewareError{Error: "invalid token"})
			return
		}
		h(w, r, u)
	}
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

// rateLimited is museum's 429, for a fault or WAN mode's limit.
var rateLimited = model.RateLimited
