package model

import "time"

// Storage plans, their checks and the upload-URL rate limit, as museum
// keeps them (docs/protocol.md UP.2, UP.10).

// Museum's sizes and limits for uploads.
const (
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
// it; m.mu is held.
func (m *Museum) planOf(u *User) *plan {
	p := m.up.plans[u.ID]
	if p == nil {
		p = &plan{storage: freeStorage, expiry: m.clock.now + (100 * 365 * 24 * time.Hour).Microseconds()}
		m.up.plans[u.ID] = p
	}
	return p
}

// SetStorage sets u's plan to bytes of storage.
func (u *User) SetStorage(bytes int64) {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	u.m.planOf(u).storage = bytes
}

// SetStorageBonus gives u bytes of bonus storage on top of the plan.
func (u *User) SetStorageBonus(bytes int64) {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	u.m.planOf(u).bonus = bytes
}

// ExpirePlan ends u's plan: without a bonus, uploads get 402 (UP.10).
func (u *User) ExpirePlan() {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	u.m.planOf(u).expiry = u.m.clock.now - 1
}

// Usage is the ciphertext u's files take, trash included (UP.10).
func (u *User) Usage() int64 {
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	return u.m.usageOf(u)
}

// usageOf sums the sizes recorded for u's files: the original and the
// thumbnail as stored at upload; m.mu is held.
func (m *Museum) usageOf(u *User) int64 {
	var n int64
	for _, f := range m.files {
		if f.Owner != u {
			continue
		}
		if c := m.up.commits[f.ID]; c != nil {
			n += c.fileSize + c.thumbSize
			continue
		}
		if o := m.store.objects[f.content.object]; o != nil && o.size > 0 {
			n += o.size
		}
		n += f.thumb.info
	}
	return n
}

// canUpload is museum's CanUploadFile for size more bytes (nil: unknown):
// nil when allowed, else 402 (plan over, no bonus) or 426 (storage full),
// with museum's empty body. After a passing check, the next request under
// 100 MiB passes unchecked while the check runs again behind it: the
// verdict lags one request (UP.10). m.mu is held.
func (m *Museum) canUpload(u *User, size *int64) error {
	p := m.planOf(u)
	if p.cached && p.passed && (size == nil || *size < cachedBelow) {
		p.passed = m.checkPlan(u, size) == nil
		return nil
	}
	err := m.checkPlan(u, size)
	p.cached, p.passed = true, err == nil
	return err
}

func (m *Museum) checkPlan(u *User, size *int64) error {
	p := m.planOf(u)
	storage := p.storage
	if p.expiry < m.clock.now {
		if p.bonus <= 0 {
			return plain(PaymentRequired)
		}
		storage = 0
	}
	usage := m.usageOf(u)
	if size != nil {
		usage += *size
		storage += overflow
	}
	if usage > storage+p.bonus {
		return plain(StorageFull)
	}
	return nil
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

type windowKey struct {
	user  int64
	route string
}
