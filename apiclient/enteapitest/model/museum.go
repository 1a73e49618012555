package model

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"time"
)

// Config tunes a Museum. The zero value is museum's defaults.
type Config struct {
	// PageSize is the nominal diff page size (museum: 2500).
	PageSize int
	// Rand is the source of keys, nonces and tokens (default crypto/rand).
	Rand io.Reader
	// Event, if set, is told of what a test may count and no request
	// shows: "EXACT REPEAT PUT /files/thumbnail" (a repeat that wedged
	// museum) and "HUNG PUT /files/thumbnail" (a write waiting on it).
	Event func(what string)
}

// Museum is the whole state of the fake server. Its methods, and those of
// the records it hands out (User, Album, File, Link), are safe for
// concurrent use.
type Museum struct {
	mu       sync.Mutex
	clock    clock
	rand     io.Reader
	nextID   int64
	cfg      Config
	accounts accounts
	albums   map[int64]*Album
	files    map[int64]*File
	store    store
	up       uploads
	links    linkState
	wedged   *wedge
}

// New makes an empty museum.
func New(cfg Config) *Museum {
	if cfg.PageSize <= 0 {
		cfg.PageSize = 2500
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Event == nil {
		cfg.Event = func(string) {}
	}
	m := &Museum{cfg: cfg, rand: cfg.Rand, clock: clock{now: 1_700_000_000_000_000}, nextID: 1000,
		albums: map[int64]*Album{}, files: map[int64]*File{}}
	m.accounts.init()
	m.store.init()
	m.up.init()
	m.links.secret = m.random(32)
	m.links.init()
	return m
}

// clock is museum's time in µs. Frozen, it stands still, so many rows
// share one updationTime.
type clock struct {
	now    int64
	frozen bool
}

// tick advances and returns the clock (µs); m.mu is held.
func (m *Museum) tick() int64 {
	if !m.clock.frozen {
		m.clock.now++
	}
	return m.clock.now
}

// Freeze stops the clock until Unfreeze: everything changed meanwhile gets
// the same updationTime, as museum can produce.
func (m *Museum) Freeze() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock.now++
	m.clock.frozen = true
}

// Unfreeze restarts the clock.
func (m *Museum) Unfreeze() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock.frozen = false
}

// Advance moves the clock d ahead: the hours that pass between a backup
// and the next change, which the clock's one µs a step never models.
func (m *Museum) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock.now += d.Microseconds()
}

// Now is the clock (µs): what link expiry, the stale link cache and the
// rate limits are judged by.
func (m *Museum) Now() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clock.now
}

// id is a new id for a user, album, file or link; m.mu is held.
func (m *Museum) id() int64 {
	m.nextID++
	return m.nextID
}

// random is n bytes of the configured source.
func (m *Museum) random(n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(m.rand, b); err != nil {
		panic("enteapitest: random source failed: " + err.Error())
	}
	return b
}

// uuid is a random UUID in its canonical text form.
func (m *Museum) uuid() string {
	h := hex.EncodeToString(m.random(16))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
