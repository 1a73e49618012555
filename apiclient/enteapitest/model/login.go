package model

import (
	"encoding/base64"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/srp"
)

// Logins as museum runs them: SRP, the emailed code,
// TOTP and passkeys.

type srpSession struct {
	user     *User
	server   *srp.Server
	a        []byte
	attempts int
	verified bool
}

type passkeySession struct {
	user     *User
	verified bool
	fetched  int
}

// Auth is museum's answer once a login step passed: keys and a token, or
// the second factor still due.
type Auth struct {
	ID                   int64
	KeyAttributes        *KeyAttributes
	EncryptedToken       []byte
	Token                string // a signup without keys: the token in clear
	TwoFactorSessionID   string
	TwoFactorSessionIDV2 string
	PasskeySessionID     string
	AccountsURL          string
	SRPM2                []byte
}

// SRPAttributes are what GET /users/srp/attributes tells of an account.
type SRPAttributes struct {
	SRPUserID         string
	SRPSalt           []byte
	MemLimit          uint64
	OpsLimit          uint32
	KEKSalt           []byte
	IsEmailMFAEnabled bool
}

// SRPAttributes answers GET /users/srp/attributes: 404 {} for no such
// user, 404 NOT_FOUND for one without SRP.
func (m *Museum) SRPAttributes(email string) (SRPAttributes, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.userByEmail(email)
	switch {
	case u == nil:
		return SRPAttributes{}, plain(NotFound)
	case u.opts.NoSRP:
		return SRPAttributes{}, refuse(NotFound, "NOT_FOUND", "srp attributes not found")
	}
	return SRPAttributes{SRPUserID: u.srp.userID, SRPSalt: u.srp.salt, MemLimit: u.attrs.MemLimit,
		OpsLimit: u.attrs.OpsLimit, KEKSalt: u.attrs.KEKSalt, IsEmailMFAEnabled: u.opts.EmailMFA}, nil
}

// CreateSRPSession answers POST /users/srp/create-session: A must be 512
// bytes (400); email MFA refuses SRP (409); a user's 11th session left
// unverified is 429 (museum counts an hour; the fake's hour never ends);
// an unknown srpUserID gets a decoy session that can never verify.
func (m *Museum) CreateSRPSession(srpUserID string, a []byte) (sessionID string, b []byte, err error) {
	if len(a) != srp.Size {
		return "", nil, refuse(BadRequest, "BAD_REQUEST", "Invalid length for srpA")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var u *User
	for _, c := range m.accounts.users {
		if c.srp.userID == srpUserID && c.srp.userID != "" {
			u = c
		}
	}
	if u != nil && u.opts.EmailMFA {
		return "", nil, refuse(Conflict, "EMAIL_MFA_ENABLED", "email MFA is enabled")
	}
	unverified := 0
	for _, o := range m.accounts.srp {
		if u != nil && o.user == u && !o.verified {
			unverified++
		}
	}
	if unverified >= 10 {
		return "", nil, refuse(TooMany, "TOO_MANY_UNVERIFIED_SESSIONS", "Too many unverified sessions")
	}
	verifier := m.random(srp.Size)
	if u != nil {
		verifier = u.srp.verifier
	}
	id := m.uuid()
	sess := &srpSession{user: u, server: srp.NewServer(verifier, m.random(32)), a: a}
	m.accounts.srp[id] = sess
	return id, sess.server.B(), nil
}

// VerifySRPSession answers POST /users/srp/verify-session for app: M1 must
// be 32 bytes (400); an unknown session or a wrong proof is 401 (counted);
// a verified session or the 5th wrong proof is 410.
func (m *Museum) VerifySRPSession(srpUserID, sessionID string, m1 []byte, app string) (*Auth, error) {
	if len(m1) != 32 {
		return nil, refuse(BadRequest, "BAD_REQUEST", "Invalid length for srpM1")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sess := m.accounts.srp[sessionID]
	switch {
	case sess == nil:
		return nil, plain(Unauthorized)
	case sess.verified:
		return nil, refuse(Gone, "SESSION_ALREADY_VERIFIED", "session already verified")
	case sess.attempts >= 5:
		return nil, refuse(Gone, "TOO_MANY_WRONG_ATTEMPTS", "too many wrong attempts")
	}
	m2, err := sess.server.Verify(sess.a, m1)
	if err != nil || sess.user == nil || sess.user.srp.userID != srpUserID {
		sess.attempts++
		return nil, plain(Unauthorized)
	}
	sess.verified = true
	auth := m.authorize(sess.user, app)
	auth.SRPM2 = m2
	return auth, nil
}

// SendOTT answers POST /users/ott: a code for a known email, 404
// USER_NOT_REGISTERED for an unknown one.
func (m *Museum) SendOTT(email string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.userByEmail(email)
	if u == nil {
		return refuse(NotFound, "USER_NOT_REGISTERED", "user not registered")
	}
	u.guard.ottLive, u.guard.ottWrong = true, 0
	return nil
}

// VerifyEmail answers POST /users/verify-email: 401 for a wrong code (or
// an unknown email), 410 with no live code, 429 after 20 wrong ones.
func (m *Museum) VerifyEmail(email, ott, app string) (*Auth, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.userByEmail(email)
	switch {
	case u == nil:
		return nil, plain(Unauthorized)
	case u.guard.ottWrong >= 20:
		return nil, plain(TooMany)
	case !u.guard.ottLive:
		return nil, plain(Gone)
	case ott != OTT:
		u.guard.ottWrong++
		return nil, plain(Unauthorized)
	}
	u.guard.ottLive = false
	return m.authorize(u, app), nil
}

// VerifyTOTP answers POST /users/two-factor/verify: 404 for an unknown
// session, 401 for a wrong or used code, 429 after 10 wrong ones.
func (m *Museum) VerifyTOTP(sessionID, code, app string) (*Auth, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.accounts.twoFactor[sessionID]
	switch {
	case u == nil:
		return nil, plain(NotFound)
	case u.guard.totpWrong >= 10:
		return nil, plain(TooMany)
	case code != u.opts.TOTP || u.guard.usedTOTPs[code]:
		u.guard.totpWrong++
		return nil, plain(Unauthorized)
	}
	u.guard.usedTOTPs[code] = true
	delete(m.accounts.twoFactor, sessionID)
	auth := &Auth{ID: u.ID}
	m.finishLogin(u, app, auth)
	return auth, nil
}

// PasskeyToken answers GET /users/two-factor/passkeys/get-token: 404 for
// an unknown session, 400 SESSION_NOT_VERIFIED before the browser's half,
// then the token at most twice (410 INVALID_SESSION after).
func (m *Museum) PasskeyToken(sessionID, app string) (*Auth, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.accounts.passkeys[sessionID]
	switch {
	case p == nil:
		return nil, plain(NotFound)
	case !p.verified:
		return nil, refuse(BadRequest, "SESSION_NOT_VERIFIED", "passkey not verified yet")
	case p.fetched >= 2:
		return nil, refuse(Gone, "INVALID_SESSION", "token already fetched")
	}
	p.fetched++
	auth := &Auth{ID: p.user.ID}
	m.finishLogin(p.user, app, auth)
	return auth, nil
}

// authorize is museum's answer once the first factor passed; m.mu is held.
func (m *Museum) authorize(u *User, app string) *Auth {
	auth := &Auth{ID: u.ID}
	switch {
	case u.opts.Passkey:
		id := base64.URLEncoding.EncodeToString(m.random(32))
		m.accounts.passkeys[id] = &passkeySession{user: u}
		auth.PasskeySessionID, auth.AccountsURL = id, "https://accounts.example.invalid"
		if u.opts.TOTP != "" {
			auth.TwoFactorSessionIDV2 = m.newTwoFactor(u)
		}
	case u.opts.TOTP != "":
		auth.TwoFactorSessionID = m.newTwoFactor(u)
	default:
		m.finishLogin(u, app, auth)
	}
	return auth
}

// finishLogin fills in the keys and a new token; m.mu is held.
func (m *Museum) finishLogin(u *User, app string, auth *Auth) {
	raw := m.newToken(u, app)
	if u.opts.NoKeys {
		auth.Token = base64.URLEncoding.EncodeToString(raw)
		return
	}
	attrs := u.attrs
	auth.KeyAttributes = &attrs
	sealed, err := keys.SealedBoxSeal(raw, u.PublicKey, m.rand)
	if err != nil {
		panic(err)
	}
	auth.EncryptedToken = sealed
}

// newTwoFactor opens a TOTP session for u; m.mu is held.
func (m *Museum) newTwoFactor(u *User) string {
	id := base64.URLEncoding.EncodeToString(m.random(32))
	m.accounts.twoFactor[id] = u
	return id
}
