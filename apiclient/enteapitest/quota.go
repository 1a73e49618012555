package enteapitest

import (
	"net/http"
	"time"
)

// Storage plans, their checks and the upload-URL rate limit, as museum
// keeps them (docs/protocol.md UP.2, UP.10).

// Museum's sizes and limits for uploads.
const (
	// MaxFileSize is the largest object POST /files accepts (UP.4: 413).
	MaxFileSize = 10 << 30
	// freeStorage is what a self-hosted museum gives every account (UP.10).
	freeStorage = 10 << 30
	// overflow is how far a check that knows the size lets an account go
	// over its plan (UP.10).
	overflow = 50 << 20
	// cachedBelow: a request smaller than this (or without a size) passes
	// unchecked after a passing check (UP.10).
	cachedBelow = 100 << 20
	// UploadURLLimit is how many requests a user may make a minute on each
	// upload-URL route (UP.2).
	UploadURLLimit = 500
)

// plan is an account's storage plan and museum's cached verdict on it.
type plan struct {
	storage, bonus int64
	expiry         int64 // µs
	passed, cached bool  // the last check's verdict, once there was one
}

// planOf returns u's plan, the self-hosted default until a test changes
// it; s.mu is held.
func (s *Server) planOf(u *User) *plan {
	up := s.up()
	p := up.plans[u.ID]
	if p == nil {
		p = &plan{storage: freeStorage, expiry: s.clock + (100 * 365 * 24 * time.Hour).Microseconds()}
		up.plans[u.ID] = p
	}
	return p
}

// SetStorage sets u's plan to bytes of storage.
func (u *User) SetStorage(bytes int64) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	u.s.planOf(u).storage = bytes
}

// SetStorageBonus gives u bytes of bonus storage on top of the plan.
func (u *User) SetStorageBonus(bytes int64) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	u.s.planOf(u).bonus = bytes
}

// ExpirePlan ends u's plan: without a bonus, uploads get 402 (UP.10).
func (u *User) ExpirePlan() {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	u.s.planOf(u).expiry = u.s.clock - 1
}

// Usage is the ciphertext u's files take, trash included (UP.10).
func (u *User) Usage() int64 {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	return u.s.usageOf(u)
}

// usageOf sums the sizes recorded for u's files: the original and the
// thumbnail as stored at upload; s.mu is held.
func (s *Server) usageOf(u *User) int64 {
	var n int64
	for _, f := range s.files {
		if f.Owner != u {
			continue
		}
		if c := s.up().commits[f.ID]; c != nil {
			n += c.fileSize + c.thumbSize
			continue
		}
		if o := s.objects[f.fileObject]; o != nil && o.size > 0 {
			n += o.size
		}
		n += f.thumbInfo
	}
	return n
}

// canUpload is museum's CanUploadFile for size more bytes (nil: unknown):
// 0 when allowed, else 402 (plan over, no bonus) or 426 (storage full).
// After a passing check, the next request under 100 MiB passes unchecked
// while the check runs again behind it: the verdict lags one request
// (UP.10). s.mu is held.
func (s *Server) canUpload(u *User, size *int64) int {
	p := s.planOf(u)
	if p.cached && p.passed && (size == nil || *size < cachedBelow) {
		p.passed = s.checkPlan(u, size) == 0
		return 0
	}
	status := s.checkPlan(u, size)
	p.cached, p.passed = true, status == 0
	return status
}

func (s *Server) checkPlan(u *User, size *int64) int {
	p := s.planOf(u)
	storage := p.storage
	if p.expiry < s.clock {
		if p.bonus <= 0 {
			return http.StatusPaymentRequired
		}
		storage = 0
	}
	usage := s.usageOf(u)
	if size != nil {
		usage += *size
		storage += overflow
	}
	if usage > storage+p.bonus {
		return http.StatusUpgradeRequired
	}
	return 0
}

// refuseUpload answers a failed plan check with museum's empty body.
func refuseUpload(w http.ResponseWriter, status int) {
	apiErr(w, status, "", "")
}

// window counts requests in a fixed minute that starts at the first of
// them, as museum's limiters do: per user and route for upload URLs
// (UP.2), per IP for a link's verify-password (PL.6).
type window struct {
	start int64 // µs
	n     int
}

// countIn counts a request at clock (µs) in m's window for key, a new
// minute starting once the last is over, and returns its count this
// minute.
func countIn[K comparable](m map[K]*window, key K, clock int64) int {
	w := m[key]
	if w == nil || clock-w.start >= time.Minute.Microseconds() {
		w = &window{start: clock}
		m[key] = w
	}
	w.n++
	return w.n
}

// rateLimited counts a request of u on route and reports whether it is
// over UploadURLLimit this minute; refused requests count too. The minute
// is the server's clock: Advance moves past it. s.mu is held.
func (s *Server) rateLimited(u *User, route string) bool {
	up := s.up()
	return countIn(up.limits, windowKey{u.ID, route}, s.clock) > UploadURLLimit
}

type windowKey struct {
	user  int64
	route string
}

// details answers GET /users/details/v2 (UP.10): usage with trash, the
// plan, the bonus. A plan that is over still answers 200.
func (s *Server) details(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.planOf(u)
	writeJSON(w, 200, map[string]any{
		"email": u.Email,
		"usage": s.usageOf(u),
		"subscription": map[string]any{"id": u.ID, "userID": u.ID, "productID": "free", "storage": p.storage,
			"originalTransactionID": "none", "expiryTime": p.expiry, "paymentProvider": "", "attributes": map[string]any{},
			"price": "", "period": ""},
		"storageBonus": p.bonus,
		"profileData":  map[string]any{"isEmailMFAEnabled": u.opts.EmailMFA, "isTwoFactorEnabled": u.opts.TOTP != "", "passkeyCount": 0},
		"bonusData":    map[string]any{"storageBonuses": []any{}},
	})
}
