package model

import (
	"encoding/base64"
	"strings"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/srp"
)

// UserOptions shape an account's login.
type UserOptions struct {
	NoSRP    bool   // SRP never set up: login must use email OTT
	EmailMFA bool   // email MFA on: SRP refused with 409, OTT instead
	TOTP     string // the TOTP code that passes, if TOTP is on
	Passkey  bool   // a passkey second factor
	NoKeys   bool   // a fresh signup without keys: login answers a plain token
	// OpsLimit and MemLimit are the Argon2id parameters. Default: the
	// cheapest libsodium allows (1 pass, 8 KiB), so tests stay fast.
	OpsLimit uint32
	MemLimit uint64
}

// OTT is the email code the fake server always sends.
const OTT = "123456"

// KeyAttributes are an account's wrapped keys (museum's keyAttributes).
type KeyAttributes struct {
	KEKSalt                           []byte
	EncryptedKey, KeyDecryptionNonce  []byte
	PublicKey                         []byte
	EncryptedSecretKey                []byte
	SecretKeyDecryptionNonce          []byte
	MemLimit                          uint64
	OpsLimit                          uint32
	MasterKeyEncryptedWithRecoveryKey []byte
	MasterKeyDecryptionNonce          []byte
	RecoveryKeyEncryptedWithMasterKey []byte
	RecoveryKeyDecryptionNonce        []byte
}

// User is an account on the fake server.
type User struct {
	m        *Museum
	ID       int64
	Email    string
	Password string
	opts     UserOptions

	MasterKey, SecretKey, PublicKey []byte
	attrs                           KeyAttributes
	srp                             srpSetup
	guard                           loginGuard
	gone                            bool // the account was deleted
}

// srpSetup is what museum keeps of a user's SRP: empty when never set up.
type srpSetup struct {
	userID   string
	salt     []byte
	verifier []byte
}

// loginGuard is museum's count of a user's login attempts.
type loginGuard struct {
	ottLive   bool
	ottWrong  int
	totpWrong int
	usedTOTPs map[string]bool
}

// token is what museum keeps of a session token: whose, under which app.
type token struct {
	userID int64
	app    string
}

// accounts are the users and their sessions; Museum.mu guards them.
type accounts struct {
	users     map[int64]*User
	tokens    map[string]token
	srp       map[string]*srpSession
	twoFactor map[string]*User
	passkeys  map[string]*passkeySession
}

func (a *accounts) init() {
	a.users, a.tokens = map[int64]*User{}, map[string]token{}
	a.srp, a.twoFactor, a.passkeys = map[string]*srpSession{}, map[string]*User{}, map[string]*passkeySession{}
}

// AddUser creates an account with real keys and, unless told otherwise, SRP.
func (m *Museum) AddUser(email, password string, o UserOptions) *User {
	if o.OpsLimit == 0 {
		o.OpsLimit = 1
	}
	if o.MemLimit == 0 {
		o.MemLimit = 8 << 10
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := &User{m: m, ID: m.id(), Email: strings.ToLower(email), Password: password, opts: o,
		guard: loginGuard{usedTOTPs: map[string]bool{}}}
	kekSalt := m.random(keys.SaltSize)
	kek, err := keys.DeriveKEK([]byte(password), kekSalt, o.OpsLimit, o.MemLimit)
	if err != nil {
		panic(err)
	}
	u.MasterKey = m.random(keys.KeySize)
	pub, sec, err := keys.NewKeyPair(m.rand)
	if err != nil {
		panic(err)
	}
	u.PublicKey, u.SecretKey = pub, sec
	recovery := m.random(keys.KeySize)
	n1, n2, n3, n4 := m.random(24), m.random(24), m.random(24), m.random(24)
	u.attrs = KeyAttributes{
		KEKSalt:                           kekSalt,
		EncryptedKey:                      keys.SecretboxSeal(u.MasterKey, n1, kek),
		KeyDecryptionNonce:                n1,
		PublicKey:                         pub,
		EncryptedSecretKey:                keys.SecretboxSeal(sec, n2, u.MasterKey),
		SecretKeyDecryptionNonce:          n2,
		MemLimit:                          o.MemLimit,
		OpsLimit:                          o.OpsLimit,
		MasterKeyEncryptedWithRecoveryKey: keys.SecretboxSeal(u.MasterKey, n3, recovery),
		MasterKeyDecryptionNonce:          n3,
		RecoveryKeyEncryptedWithMasterKey: keys.SecretboxSeal(recovery, n4, u.MasterKey),
		RecoveryKeyDecryptionNonce:        n4,
	}
	if !o.NoSRP {
		loginKey, err := keys.LoginKey(kek)
		if err != nil {
			panic(err)
		}
		u.srp.userID = m.uuid()
		u.srp.salt = m.random(16)
		u.srp.verifier = srp.Verifier([]byte(u.srp.userID), loginKey, u.srp.salt)
	}
	m.accounts.users[u.ID] = u
	return u
}

// userByEmail finds a user as museum does, the email trimmed and lower
// cased; m.mu is held.
func (m *Museum) userByEmail(email string) *User {
	email = strings.ToLower(strings.TrimSpace(email))
	for _, u := range m.accounts.users {
		if u.Email == email {
			return u
		}
	}
	return nil
}

// TokenUser is the user of a session token used under app ("photos",
// "auth", "locker"), or nil: a token is valid only under the app it was
// issued for.
func (m *Museum) TokenUser(tok, app string) *User {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.accounts.tokens[tok]
	if !ok || t.app != app {
		return nil
	}
	return m.accounts.users[t.userID]
}

// Logout ends the session of tok.
func (m *Museum) Logout(tok string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.accounts.tokens, tok)
}

// newToken mints a token for u under app and returns its 32 raw bytes;
// m.mu is held.
func (m *Museum) newToken(u *User, app string) []byte {
	raw := m.random(32)
	m.accounts.tokens[base64.URLEncoding.EncodeToString(raw)] = token{userID: u.ID, app: app}
	return raw
}

// Validity is GET /users/session-validity/v2's answer for u: whether the
// keys are set, and the keys.
func (u *User) Validity() (hasSetKeys bool, attrs KeyAttributes) {
	return !u.opts.NoKeys, u.attrs
}

// Token logs u in directly and returns a token for the Photos app, so tests
// that are not about login can skip it.
func (u *User) Token() string {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	return base64.URLEncoding.EncodeToString(u.m.newToken(u, "photos"))
}

// TokenCount is how many live tokens u has (logout removes one).
func (u *User) TokenCount() int {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	n := 0
	for _, t := range u.m.accounts.tokens {
		if t.userID == u.ID {
			n++
		}
	}
	return n
}

// RevokeSessions ends every session of u, as "log out of all devices" in
// Ente's apps does: each later request with one of its tokens gets 401.
func (u *User) RevokeSessions() {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	for k, t := range u.m.accounts.tokens {
		if t.userID == u.ID {
			delete(u.m.accounts.tokens, k)
		}
	}
}

// ApprovePasskey completes the browser half of u's pending passkey logins.
func (u *User) ApprovePasskey() {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	for _, p := range u.m.accounts.passkeys {
		if p.user == u {
			p.verified = true
		}
	}
}

// DeleteAccount deletes u's account as museum does for a sharer: the
// albums u shared leave their sharees' listings with no tombstone, and
// their diffs answer 404.
func (u *User) DeleteAccount() {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	u.gone = true
}

// Details is what GET /users/details/v2 reports of u.
func (u *User) Details() Details {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	p := u.m.planOf(u)
	return Details{Email: u.Email, Usage: u.m.usageOf(u), Storage: p.storage, Expiry: p.expiry, Bonus: p.bonus,
		EmailMFA: u.opts.EmailMFA, TwoFactor: u.opts.TOTP != ""}
}

// Details are an account's storage figures and second factors.
type Details struct {
	Email                  string
	Usage, Storage, Expiry int64
	Bonus                  int64
	EmailMFA, TwoFactor    bool
}

// User is the user of that email, or nil.
func (m *Museum) User(email string) *User {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.userByEmail(email)
}
