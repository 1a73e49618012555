package enteapitest

import (
	"net/http"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// A public link's owner's routes, /collections/share-url (PL.2): answers
// are {"result": PublicURL}.

func (s *Server) linkRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /collections/share-url", s.authed(s.createShareURL))
	mux.HandleFunc("PUT /collections/share-url", s.authed(s.updateShareURL))
	mux.HandleFunc("DELETE /collections/share-url/{id}", s.authed(s.deleteShareURL))
}

func (s *Server) createShareURL(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		CollectionID  int64 `json:"collectionID"`
		ValidTill     int64 `json:"validTill"`
		DeviceLimit   int   `json:"deviceLimit"`
		EnableCollect bool  `json:"enableCollect"`
		EnableComment bool  `json:"enableComment"`
		EnableJoin    *bool `json:"enableJoin"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	l, err := s.m.CreateShareURL(u, model.NewLink{CollectionID: in.CollectionID, ValidTill: in.ValidTill,
		DeviceLimit: in.DeviceLimit, EnableCollect: in.EnableCollect, EnableComment: in.EnableComment, EnableJoin: in.EnableJoin})
	writeLink(w, l, err)
}

func (s *Server) updateShareURL(w http.ResponseWriter, r *http.Request, u *User) {
	var in struct {
		CollectionID    int64   `json:"collectionID"`
		ValidTill       *int64  `json:"validTill"`
		DeviceLimit     *int    `json:"deviceLimit"`
		PassHash        *string `json:"passHash"`
		Nonce           *string `json:"nonce"`
		MemLimit        *uint64 `json:"memLimit"`
		OpsLimit        *uint32 `json:"opsLimit"`
		DisablePassword *bool   `json:"disablePassword"`
		EnableDownload  *bool   `json:"enableDownload"`
		EnableCollect   *bool   `json:"enableCollect"`
		EnableComment   *bool   `json:"enableComment"`
		EnableJoin      *bool   `json:"enableJoin"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	l, err := s.m.UpdateShareURL(u, (*model.LinkUpdate)(&in))
	writeLink(w, l, err)
}

// writeLink answers with a link's settings, or err.
func writeLink(w http.ResponseWriter, l model.LinkSettings, err error) {
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]wire.PublicURL{"result": linkJSON(l)})
}

func (s *Server) deleteShareURL(w http.ResponseWriter, r *http.Request, u *User) {
	id, ok := pathID(r)
	if !ok {
		writeJSON(w, 400, struct{}{})
		return
	}
	if err := s.m.DeleteShareURL(u, id); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(200)
}
