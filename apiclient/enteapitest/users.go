package enteapitest

import (
	"net/http"

	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// The /users routes: logins (SRP, emailed code, TOTP, passkey), the
// session and the account's storage.

func (s *Server) userRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /users/srp/attributes", s.srpAttributes)
	mux.HandleFunc("POST /users/srp/create-session", s.srpCreateSession)
	mux.HandleFunc("POST /users/srp/verify-session", s.srpVerifySession)
	mux.HandleFunc("POST /users/ott", s.sendOTT)
	mux.HandleFunc("POST /users/verify-email", s.verifyEmail)
	mux.HandleFunc("POST /users/two-factor/verify", s.verifyTOTP)
	mux.HandleFunc("GET /users/two-factor/passkeys/get-token", s.passkeyToken)
	mux.HandleFunc("GET /users/session-validity/v2", s.authed(s.sessionValidity))
	mux.HandleFunc("POST /users/logout", s.authed(s.logout))
	mux.HandleFunc("GET /users/details/v2", s.authed(s.details))
}

func (s *Server) srpAttributes(w http.ResponseWriter, r *http.Request) {
	a, err := s.m.SRPAttributes(r.URL.Query().Get("email"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]wire.SRPAttributes{"attributes": {SRPUserID: a.SRPUserID, SRPSalt: b64(a.SRPSalt),
		MemLimit: int(a.MemLimit), OpsLimit: int(a.OpsLimit), KEKSalt: b64(a.KEKSalt), IsEmailMFAEnabled: a.IsEmailMFAEnabled}})
}

func (s *Server) srpCreateSession(w http.ResponseWriter, r *http.Request) {
	var in wire.CreateSRPSessionRequest
	readJSON(r, &in) // a bad body has no srpA of 512 bytes: 400
	id, b, err := s.m.CreateSRPSession(in.SRPUserID, unb64(in.SRPA))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, wire.CreateSRPSessionResponse{SessionID: id, SRPB: b64(b)})
}

func (s *Server) srpVerifySession(w http.ResponseWriter, r *http.Request) {
	var in wire.VerifySRPSessionRequest
	readJSON(r, &in) // a bad body has no srpM1 of 32 bytes: 400
	auth, err := s.m.VerifySRPSession(in.SRPUserID, in.SessionID, unb64(in.SRPM1), appOf(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, authJSON(auth))
}

func (s *Server) sendOTT(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email   string `json:"email"`
		Purpose string `json:"purpose"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	if err := s.m.SendOTT(in.Email); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(200)
}

func (s *Server) verifyEmail(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email string `json:"email"`
		OTT   string `json:"ott"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	auth, err := s.m.VerifyEmail(in.Email, in.OTT, appOf(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, authJSON(auth))
}

func (s *Server) verifyTOTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SessionID string `json:"sessionID"`
		Code      string `json:"code"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	auth, err := s.m.VerifyTOTP(in.SessionID, in.Code, appOf(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, twoFactorJSON(auth))
}

func (s *Server) passkeyToken(w http.ResponseWriter, r *http.Request) {
	auth, err := s.m.PasskeyToken(r.URL.Query().Get("sessionID"), appOf(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, twoFactorJSON(auth))
}

// sessionValidity is museum's GetSessionValidityV2: the keys, or
// hasSetKeys false alone.
func (s *Server) sessionValidity(w http.ResponseWriter, _ *http.Request, u *User) {
	set, attrs := u.Validity()
	if !set {
		writeJSON(w, 200, map[string]bool{"hasSetKeys": false})
		return
	}
	writeJSON(w, 200, map[string]any{"hasSetKeys": true, "keyAttributes": keysJSON(attrs)})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, _ *User) {
	s.m.Logout(r.Header.Get("X-Auth-Token"))
	writeJSON(w, 200, struct{}{})
}

// details answers GET /users/details/v2 (UP.10): usage with trash, the
// plan, the bonus. A plan that is over still answers 200.
func (s *Server) details(w http.ResponseWriter, _ *http.Request, u *User) {
	d := u.Details()
	writeJSON(w, 200, wire.UserDetails{Email: d.Email, Usage: d.Usage, StorageBonus: d.Bonus,
		Subscription: wire.Subscription{ID: u.ID, UserID: u.ID, ProductID: "free", Storage: d.Storage,
			OriginalTransactionID: "none", ExpiryTime: d.Expiry, Attributes: map[string]any{}},
		ProfileData: &wire.ProfileData{IsEmailMFAEnabled: d.EmailMFA, IsTwoFactorEnabled: d.TwoFactor},
		BonusData:   &wire.BonusData{StorageBonuses: []any{}}})
}
