package enteapitest

import (
	"net/http"
	"strconv"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
)

// linkPasswordRoute is the one route a password link serves without a JWT
// besides /info (PL.6).
const linkPasswordRoute = "/public-collection/verify-password"

// linkInfo is GET /public-collection/info (PL.3): the album as its owner
// has it, minus sharees and private magic metadata, and the link's settings
// without its expiry or device limit (always 0 here).
func (s *Server) linkInfo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, row, ok := s.linkAuth(w, r)
	if !ok {
		return
	}
	a := l.album
	c, _, _ := s.collectionFor(a, a.Owner)
	c.Sharees, c.MagicMetadata = nil, nil
	settings := map[string]any{"url": "", "deviceLimit": 0, "validTill": 0, "enableDownload": row.enableDownload,
		"enableCollect": row.enableCollect, "enableComment": row.enableComment, "enableJoin": row.enableJoin,
		"passwordEnabled": row.passHash != ""}
	if row.passHash != "" {
		settings["nonce"], settings["opsLimit"], settings["memLimit"] = keys.EncodeB64(row.nonce), row.opsLimit, row.memLimit
	}
	type withLinks struct {
		apiclient.Collection
		PublicURLs []map[string]any `json:"publicURLs"`
	}
	writeJSON(w, 200, map[string]any{"collection": withLinks{c, []map[string]any{settings}}, "referralCode": "FAKE42"})
}

// linkDiff is GET /public-collection/diff (PL.3): the owner's diff of the
// album, strictly after sinceTime, ascending, never splitting one
// updationTime; a missing or bad sinceTime is 400.
func (s *Server) linkDiff(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, _, ok := s.linkAuth(w, r)
	if !ok {
		return
	}
	since, err := strconv.ParseInt(r.URL.Query().Get("sinceTime"), 10, 64)
	if err != nil {
		apiErr(w, 400, "BAD_REQUEST", "invalid sinceTime val: "+r.URL.Query().Get("sinceTime"))
		return
	}
	a := l.album
	es, more := s.diffPage(a, since)
	page := make([]apiclient.File, 0, len(es))
	for _, e := range es {
		page = append(page, s.fileFor(a, e, a.Owner)) // magicMetadata is never sent (PL.3)
	}
	a.touchIfEndless(es)
	writeJSON(w, 200, apiclient.DiffPage{Diff: page, HasMore: more || a.neverEnding})
}

// linkObject is GET /public-collection/files/{download,preview}/:id
// (PL.3): a 307 to the object when the file is live in the link's album,
// else 403 {}; a non-numeric id is 400 {}. enableDownload is not enforced
// (PL.9.3), and the device limit is not checked (PL.5).
func (s *Server) linkObject(thumb bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		l, _, ok := s.linkAuth(w, r)
		if !ok {
			s.mu.Unlock()
			return
		}
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		e := l.album.entries[id]
		var key string
		if e != nil {
			key = e.file.fileObject
			if thumb {
				key = e.file.thumbObject
			}
		}
		s.mu.Unlock()
		switch {
		case err != nil:
			apiErr(w, 400, "", "")
		case e == nil || e.deleted:
			apiErr(w, 403, "", "")
		case key == "":
			apiErr(w, 404, "", "")
		default:
			http.Redirect(w, r, s.presign(key), http.StatusTemporaryRedirect)
		}
	}
}

// linkVerifyPassword is POST /public-collection/verify-password (PL.6):
// after the token checks, 10 a minute per IP across all links; then 400
// without a passHash or for a link without a password, 401 {} for a wrong
// one, else a JWT of the passHash for 365 days.
func (s *Server) linkVerifyPassword(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, _, ok := s.linkAuth(w, r)
	if !ok {
		return
	}
	if !s.passwordAttempt(clientIP(r)) {
		middlewareErr(w, 429, "Rate limit breached, try later")
		return
	}
	var in struct {
		PassHash string `json:"passHash"`
	}
	if !readJSON(r, &in) || in.PassHash == "" {
		apiErr(w, 400, "BAD_REQUEST", "")
		return
	}
	row := l.current()
	switch {
	case row.disabled:
		apiErr(w, 404, "", "") // no active row for the album any more
	case row.passHash == "":
		apiErr(w, 400, "", "")
	case in.PassHash != row.passHash:
		apiErr(w, 401, "", "")
	default:
		jwt := signJWT(s.links.secret, passwordClaim{PassKey: in.PassHash, ExpiryTime: s.clock + 365*microsPerDay})
		writeJSON(w, 200, map[string]string{"jwtToken": jwt})
	}
}
