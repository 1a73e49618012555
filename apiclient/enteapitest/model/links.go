package model

import (
	"slices"
	"strconv"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/publink"
)

// AlbumsURL is where the fake's public links point: museum's default
// apps.public-albums. Its API server is the fake's URL, not the one the
// host stands for: pass that explicitly.
const AlbumsURL = "https://albums.ente.com"

// Public album links, as museum serves them (docs/protocol.md PL.2–PL.6;
// read in museum's source, a621d73, and seen on a running museum). Every
// rule below names the PL section it follows.

// linkState is the public links; Museum.mu guards it.
type linkState struct {
	byToken  map[string]*Link     // every link ever made, turned off ones too (PL.2)
	active   map[int64]*Link      // the album's link that is on
	secret   []byte               // HS256 key of the JWTs museum signs
	cache    map[string]linkCache // PL.4 stale cache, per (token, IP, User-Agent)
	attempts map[string]*window   // PL.6 verify-password limit, per IP
	lapsed   map[int64]bool       // owners without a subscription (PL.4)
}

func (ls *linkState) init() {
	ls.byToken, ls.active, ls.cache = map[string]*Link{}, map[int64]*Link{}, map[string]linkCache{}
	ls.attempts, ls.lapsed = map[string]*window{}, map[int64]bool{}
}

// linkRow is what museum keeps of a link (public_collection_tokens): the
// state a request is judged by, and what its stale cache holds.
type linkRow struct {
	disabled       bool
	validTill      int64 // µs, 0: never expires
	deviceLimit    int   // 0: no limit
	passHash       string
	nonce          []byte
	opsLimit       uint32
	memLimit       uint64
	enableDownload bool
	enableCollect  bool
	enableComment  bool
	enableJoin     bool
}

// Link is a public link of an album on the fake server.
type Link struct {
	m       *Museum
	ID      int64
	album   *Album
	token   string
	row     linkRow
	devices map[device]bool // public_collection_access_history (PL.5)
	reads   []LinkRead      // the /info and /diff requests admitted, oldest first
}

// LinkRead is one /info or /diff request a link admitted (PL.5): its path,
// the device token it sent ("" for none; a stale or foreign one too), and
// the one its answer carried ("" for none; /diff never carries one).
type LinkRead struct {
	Path, Sent, Minted string
}

// device is what museum counts as one: the client IP and the User-Agent.
type device struct{ ip, ua string }

// current is the row as a request sees it now; m.mu is held. Deleting the
// album or the owner's account turns the link off (PL.2).
func (l *Link) current() linkRow {
	r := l.row
	r.disabled = r.disabled || l.album.deleted || l.album.Owner.gone
	return r
}

// LinkOptions shape a link made by Album.ShareLink.
type LinkOptions struct {
	Password string // "": no password
	// OpsLimit and MemLimit are the password's Argon2id parameters.
	// Default: the cheapest libsodium allows (1 pass, 8 KiB), so tests stay
	// fast; Ente's apps use 2 and 64 MiB.
	OpsLimit uint32
	MemLimit uint64
	// NoDownload turns enableDownload off, which museum does not enforce
	// (PL.9.3).
	NoDownload  bool
	DeviceLimit int   // 0: no limit; 50 means 500 (PL.5)
	ValidTill   int64 // µs on the server's clock (ServerTime); 0: never
}

// ShareLink makes the album's public link, or changes the one that is on,
// as its owner would with POST and PUT /collections/share-url (PL.2).
func (a *Album) ShareLink(o LinkOptions) *Link {
	m := a.m
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.createLink(a, o.ValidTill, o.DeviceLimit)
	l.row.validTill, l.row.deviceLimit, l.row.enableDownload = o.ValidTill, o.DeviceLimit, !o.NoDownload
	if o.Password != "" {
		l.setPassword(o.Password, o.OpsLimit, o.MemLimit)
	}
	return l
}

// createLink returns the album's active link, or makes one with a new
// token; m.mu is held. An active link comes back unchanged (PL.2).
func (m *Museum) createLink(a *Album, validTill int64, deviceLimit int) *Link {
	ls := &m.links
	if l := ls.active[a.ID]; l != nil && !l.current().disabled {
		return l
	}
	l := &Link{m: m, ID: m.id(), album: a, token: m.linkToken(), devices: map[device]bool{},
		row: linkRow{validTill: validTill, deviceLimit: deviceLimit, enableDownload: true, enableJoin: true}}
	ls.byToken[l.token] = l
	ls.active[a.ID] = l
	a.updated = m.tick() // a new link bumps the album (PL.2)
	return l
}

// linkToken is museum's access token: 10 characters of [2-9A-Z], the first
// ten of a shortuuid upper-cased (PL.1); m.mu is held.
func (m *Museum) linkToken() string {
	const chars = "23456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for {
		b := m.random(10)
		for i := range b {
			b[i] = chars[int(b[i])%len(chars)]
		}
		if m.links.byToken[string(b)] == nil {
			return string(b)
		}
	}
}

// setPassword sets the link's password as Ente's apps do: a random salt
// sent as "nonce", Argon2id of the password as passHash (PL.2, PL.6).
func (l *Link) setPassword(pw string, ops uint32, mem uint64) {
	if ops == 0 {
		ops = 1
	}
	if mem == 0 {
		mem = 8 << 10
	}
	salt := l.m.random(keys.SaltSize)
	h, err := keys.DeriveKEK([]byte(pw), salt, ops, mem)
	if err != nil {
		panic(err)
	}
	l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = keys.EncodeB64(h), salt, ops, mem
}

// URL is the link as Ente's apps share it: museum's url and, after the #,
// the album key in base58 (PL.1).
func (l *Link) URL() string {
	return AlbumsURL + "/?t=" + l.token + "#" + publink.EncodeKey(l.album.key)
}

// Token is the link's access token.
func (l *Link) Token() string { return l.token }

// Disable turns the link off as DELETE /collections/share-url does: every
// request with its token answers 410 from now on, except what the stale
// cache still serves (PL.2, PL.4). A later ShareLink makes a new token.
func (l *Link) Disable() {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.row.disabled = true
}

// SetPassword gives the link a password (cheap Argon2id parameters), or
// removes it with "". A JWT of the old password stops working (PL.6).
func (l *Link) SetPassword(pw string) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if pw == "" {
		l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = "", nil, 0, 0
		return
	}
	l.setPassword(pw, 0, 0)
}

// SetValidTill sets the link's expiry (µs on ServerTime's clock; 0: never).
func (l *Link) SetValidTill(us int64) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.row.validTill = us
}

// SetDeviceLimit sets the link's device limit (0: none; 50 means 500).
func (l *Link) SetDeviceLimit(n int) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.row.deviceLimit = n
}

// SetDownload turns enableDownload on or off.
func (l *Link) SetDownload(on bool) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.row.enableDownload = on
}

// Devices is how many (IP, User-Agent) pairs the link has admitted and
// recorded (PL.5).
func (l *Link) Devices() int {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	return len(l.devices)
}

// Reads are the /info and /diff requests the link admitted, oldest first,
// so a test can see which device token a reader kept and sent back.
func (l *Link) Reads() []LinkRead {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	return slices.Clone(l.reads)
}

// LapseSubscription ends u's subscription: u's links answer 410 "no
// active subscription" (PL.4).
func (m *Museum) LapseSubscription(u *User) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.links.lapsed[u.ID] = true
}

// LinkSettings are a link's settings as museum's PublicURL states them.
type LinkSettings struct {
	URL                                        string
	DeviceLimit                                int
	ValidTill                                  int64
	EnableDownload, EnableCollect              bool
	EnableComment, EnableJoin, PasswordEnabled bool
	Nonce                                      []byte // with a password only
	OpsLimit                                   uint32
	MemLimit                                   uint64
}

// settings is museum's PublicURL of row r with url; the password's salt
// and limits only when it has one.
func (r linkRow) settings(url string) LinkSettings {
	s := LinkSettings{URL: url, DeviceLimit: r.deviceLimit, ValidTill: r.validTill, EnableDownload: r.enableDownload,
		EnableCollect: r.enableCollect, EnableComment: r.enableComment, EnableJoin: r.enableJoin,
		PasswordEnabled: r.passHash != ""}
	if r.passHash != "" {
		s.Nonce, s.OpsLimit, s.MemLimit = r.nonce, r.opsLimit, r.memLimit
	}
	return s
}

// ownedAlbum is album id when u may manage its link: 404 unknown or
// deleted, 403 not the owner; m.mu is held.
func (m *Museum) ownedAlbum(u *User, id int64) (*Album, error) {
	a := m.albums[id]
	switch {
	case a == nil || a.deleted:
		return nil, plain(NotFound)
	case a.Owner != u:
		return nil, plain(Forbidden)
	}
	return a, nil
}

// NewLink is a POST /collections/share-url body.
type NewLink struct {
	CollectionID                 int64
	ValidTill                    int64
	DeviceLimit                  int
	EnableCollect, EnableComment bool
	EnableJoin                   *bool
}

// CreateShareURL answers POST /collections/share-url (PL.2): no
// validation; an active link comes back unchanged, body ignored;
// uncategorized 400.
func (m *Museum) CreateShareURL(u *User, in NewLink) (LinkSettings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.ownedAlbum(u, in.CollectionID)
	if err != nil {
		return LinkSettings{}, err
	}
	if a.Type == "uncategorized" {
		return LinkSettings{}, refuse(BadRequest, "BAD_REQUEST", "")
	}
	had := m.links.active[a.ID]
	l := m.createLink(a, in.ValidTill, in.DeviceLimit)
	if l != had {
		l.row.enableCollect, l.row.enableComment = in.EnableCollect, in.EnableComment
		l.row.enableJoin = in.EnableJoin == nil || *in.EnableJoin
	}
	return l.row.settings(AlbumsURL + "/?t=" + l.token), nil
}

// LinkUpdate is a PUT /collections/share-url body: nil fields are left as
// they are.
type LinkUpdate struct {
	CollectionID    int64
	ValidTill       *int64
	DeviceLimit     *int
	PassHash        *string
	Nonce           *string
	MemLimit        *uint64
	OpsLimit        *uint32
	DisablePassword *bool
	EnableDownload  *bool
	EnableCollect   *bool
	EnableComment   *bool
	EnableJoin      *bool
}

// UpdateShareURL answers PUT /collections/share-url with museum's
// validation (ente.UpdatePublicAccessTokenRequest.Validate, PL.2); omitted
// fields stay as they are.
func (m *Museum) UpdateShareURL(u *User, in *LinkUpdate) (LinkSettings, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg := in.refusal(m.clock.now); msg != "" {
		return LinkSettings{}, refuse(BadRequest, "BAD_REQUEST", msg)
	}
	a, err := m.ownedAlbum(u, in.CollectionID)
	if err != nil {
		return LinkSettings{}, err
	}
	l := m.links.active[a.ID]
	if l == nil || l.current().disabled {
		return LinkSettings{}, plain(NotFound)
	}
	in.apply(&l.row)
	switch {
	case in.allPass():
		l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = *in.PassHash, dec(*in.Nonce), *in.OpsLimit, *in.MemLimit
	case in.DisablePassword != nil && *in.DisablePassword:
		l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = "", nil, 0, 0
	}
	a.updated = m.tick() // a changed link bumps the album (PL.2)
	return l.row.settings(AlbumsURL + "/?t=" + l.token), nil
}

func (in *LinkUpdate) allPass() bool {
	return in.PassHash != nil && in.Nonce != nil && in.MemLimit != nil && in.OpsLimit != nil
}

func (in *LinkUpdate) noPass() bool {
	return in.PassHash == nil && in.Nonce == nil && in.MemLimit == nil && in.OpsLimit == nil
}

// refusal is museum's 400 message for an update it refuses at clock, or "".
func (in *LinkUpdate) refusal(clock int64) string {
	switch {
	case in.noPass() && in.ValidTill == nil && in.DeviceLimit == nil && in.DisablePassword == nil &&
		in.EnableDownload == nil && in.EnableCollect == nil && in.EnableComment == nil && in.EnableJoin == nil:
		return "all parameters are missing"
	case in.DeviceLimit != nil && (*in.DeviceLimit < 0 || *in.DeviceLimit > 50):
		return "device limit: " + strconv.Itoa(*in.DeviceLimit) + " out of range [0-50]"
	case in.ValidTill != nil && *in.ValidTill != 0 && *in.ValidTill < clock:
		return "valid till should be greater than current timestamp"
	case !in.allPass() && !in.noPass():
		return "all password params should be either present or missing"
	case in.allPass() && in.DisablePassword != nil && *in.DisablePassword:
		return "can not set and disable password in same request"
	}
	return ""
}

// apply sets the fields the update names.
func (in *LinkUpdate) apply(r *linkRow) {
	if in.ValidTill != nil {
		r.validTill = *in.ValidTill
	}
	if in.DeviceLimit != nil {
		r.deviceLimit = *in.DeviceLimit
	}
	for _, f := range []struct {
		in  *bool
		out *bool
	}{{in.EnableDownload, &r.enableDownload}, {in.EnableCollect, &r.enableCollect}, {in.EnableComment, &r.enableComment}, {in.EnableJoin, &r.enableJoin}} {
		if f.in != nil {
			*f.out = *f.in
		}
	}
}

// DeleteShareURL answers DELETE /collections/share-url/:id: no body,
// idempotent; the link is off for good and a later POST mints a new token
// (PL.2).
func (m *Museum) DeleteShareURL(u *User, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.ownedAlbum(u, id)
	if err != nil {
		return err
	}
	if l := m.links.active[a.ID]; l != nil {
		l.row.disabled = true
		delete(m.links.active, a.ID)
	}
	return nil
}
