package enteapitest

import (
	"encoding/base64"
	"net/http"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/srp"
)

type srpSession struct {
	user     *User
	server   *srp.Server
	a        []byte
	attempts int
	verified bool
}

type twoFactorSession struct {
	user *User
}

type passkeySession struct {
	user     *User
	verified bool
	fetched  int
}

func (s *Server) srpAttributes(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	u := s.userByEmail(r.URL.Query().Get("email"))
	s.mu.Unlock()
	switch {
	case u == nil:
		apiErr(w, 404, "", "")
	case u.opts.NoSRP:
		apiErr(w, 404, "NOT_FOUND", "srp attributes not found")
	default:
		writeJSON(w, 200, map[string]any{"attributes": apiclient.SRPAttributes{
			SRPUserID: u.srpUserID, SRPSalt: u.srpSalt, MemLimit: u.attrs.MemLimit,
			OpsLimit: u.attrs.OpsLimit, KEKSalt: u.attrs.KEKSalt, IsEmailMFAEnabled: u.opts.EmailMFA,
		}})
	}
}

func (s *Server) srpCreateSession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SRPUserID string        `json:"srpUserID"`
		SRPA      apiclient.B64 `json:"srpA"`
	}
	if !readJSON(r, &in) || len(in.SRPA) != srp.Size {
		apiErr(w, 400, "BAD_REQUEST", "Invalid length for srpA")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var u *User
	for _, c := range s.users {
		if c.srpUserID == in.SRPUserID && c.srpUserID != "" {
			u = c
		}
	}
	if u != nil && u.opts.EmailMFA {
		apiErr(w, 409, "EMAIL_MFA_ENABLED", "email MFA is enabled")
		return
	}
	// museum refuses a user's 11th SRP session left unverified within an
	// hour (controller/user/srp.go); the fake's hour never ends.
	unverified := 0
	for _, o := range s.srpSessions {
		if u != nil && o.user == u && !o.verified {
			unverified++
		}
	}
	if unverified >= 10 {
		apiErr(w, 429, "TOO_MANY_UNVERIFIED_SESSIONS", "Too many unverified sessions")
		return
	}
	verifier := s.random(srp.Size) // unknown users get a decoy session
	if u != nil {
		verifier = u.verifier
	}
	id := uuid(s.random(16))
	sess := &srpSession{user: u, server: srp.NewServer(verifier, s.random(32)), a: in.SRPA}
	s.srpSessions[id] = sess
	writeJSON(w, 200, map[string]any{"sessionID": id, "srpB": apiclient.B64(sess.server.B())})
}

func (s *Server) srpVerifySession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SRPUserID string        `json:"srpUserID"`
		SessionID string        `json:"sessionID"`
		SRPM1     apiclient.B64 `json:"srpM1"`
	}
	if !readJSON(r, &in) || len(in.SRPM1) != 32 {
		apiErr(w, 400, "BAD_REQUEST", "Invalid length for srpM1")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.srpSessions[in.SessionID]
	switch {
	case sess == nil:
		apiErr(w, 401, "", "")
		return
	case sess.verified:
		apiErr(w, 410, "SESSION_ALREADY_VERIFIED", "session already verified")
		return
	case sess.attempts >= 5:
		apiErr(w, 410, "TOO_MANY_WRONG_ATTEMPTS", "too many wrong attempts")
		return
	}
	m2, err := sess.server.Verify(sess.a, in.SRPM1)
	if err != nil || sess.user == nil || sess.user.srpUserID != in.SRPUserID {
		sess.attempts++
		apiErr(w, 401, "", "")
		return
	}
	sess.verified = true
	resp := s.authorize(sess.user, appOf(r))
	resp.SRPM2 = m2
	writeJSON(w, 200, resp)
}

// authorize is museum's answer once the first factor passed; s.mu is held.
func (s *Server) authorize(u *User, app string) *apiclient.AuthResponse {
	resp := &apiclient.AuthResponse{ID: u.ID}
	switch {
	case u.opts.Passkey:
		id := base64.URLEncoding.EncodeToString(s.random(32))
		s.passkeys[id] = &passkeySession{user: u}
		resp.PasskeySessionID, resp.AccountsURL = id, "https://accounts.example.invalid"
		if u.opts.TOTP != "" {
			resp.TwoFactorSessionIDV2 = s.newTwoFactor(u)
		}
	case u.opts.TOTP != "":
		resp.TwoFactorSessionID = s.newTwoFactor(u)
	default:
		s.finishLogin(u, app, resp)
	}
	return resp
}

// finishLogin fills in the keys and token; s.mu is held.
func (s *Server) finishLogin(u *User, app string, resp *apiclient.AuthResponse) {
	raw := s.newToken(u, app)
	if u.opts.NoKeys {
		resp.Token = base64.URLEncoding.EncodeToString(raw)
		return
	}
	attrs := u.attrs
	resp.KeyAttributes = &attrs
	sealed, err := keys.SealedBoxSeal(raw, u.PublicKey, s.rand)
	if err != nil {
		panic(err)
	}
	resp.EncryptedToken = sealed
}

// writeLogin answers with u's keys and a new token; s.mu is held.
func (s *Server) writeLogin(w http.ResponseWriter, r *http.Request, u *User) {
	resp := &apiclient.AuthResponse{ID: u.ID}
	s.finishLogin(u, appOf(r), resp)
	writeJSON(w, 200, resp)
}

func (s *Server) newTwoFactor(u *User) string {
	id := base64.URLEncoding.EncodeToString(s.random(32))
	s.twoFactor[id] = &twoFactorSession{user: u}
	return id
}

func (s *Server) sendOTT(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email   string `json:"email"`
		Purpose string `json:"purpose"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userByEmail(in.Email)
	if u == nil {
		apiErr(w, 404, "USER_NOT_REGISTERED", "user not registered")
		return
	}
	u.ottLive, u.ottWrong = true, 0
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
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userByEmail(in.Email)
	switch {
	case u == nil:
		apiErr(w, 401, "", "")
	case u.ottWrong >= 20:
		apiErr(w, 429, "", "")
	case !u.ottLive:
		apiErr(w, 410, "", "")
	case in.OTT != OTT:
		u.ottWrong++
		apiErr(w, 401, "", "")
	default:
		u.ottLive = false
		writeJSON(w, 200, s.authorize(u, appOf(r)))
	}
}

func (s *Server) verifyTOTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SessionID string `json:"sessionID"`
		Code      string `json:"code"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.twoFactor[in.SessionID]
	switch {
	case sess == nil:
		apiErr(w, 404, "", "")
	case sess.user.totpWrong >= 10:
		apiErr(w, 429, "", "")
	case in.Code != sess.user.opts.TOTP || sess.user.usedTOTPs[in.Code]:
		sess.user.totpWrong++
		apiErr(w, 401, "", "")
	default:
		sess.user.usedTOTPs[in.Code] = true
		delete(s.twoFactor, in.SessionID)
		s.writeLogin(w, r, sess.user)
	}
}

func (s *Server) passkeyToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.passkeys[r.URL.Query().Get("sessionID")]
	switch {
	case p == nil:
		apiErr(w, 404, "", "")
	case !p.verified:
		apiErr(w, 400, "SESSION_NOT_VERIFIED", "passkey not verified yet")
	case p.fetched >= 2:
		apiErr(w, 410, "INVALID_SESSION", "token already fetched")
	default:
		p.fetched++
		s.writeLogin(w, r, p.user)
	}
}

func (s *Server) sessionValidity(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	writeJSON(w, 200, map[string]any{"hasSetKeys": !u.opts.NoKeys, "keyAttributes": u.attrs})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.authUser(w, r); !ok {
		return
	}
	s.mu.Lock()
	delete(s.tokens, r.Header.Get("X-Auth-Token"))
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{})
}
