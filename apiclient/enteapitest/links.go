package enteapitest

import (
	"net/http"
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

// linkState is the fake's public links; s.mu guards it.
type linkState struct {
	byToken  map[string]*Link     // every link ever made, turned off ones too (PL.2)
	active   map[int64]*Link      // the album's link that is on
	secret   []byte               // HS256 key of the JWTs museum signs
	cache    map[string]linkCache // PL.4 stale cache, per (token, IP, User-Agent)
	attempts map[string]*window   // PL.6 verify-password limit, per IP
	lapsed   map[int64]bool       // owners without a subscription (PL.4)
}

// links is s's link state, made on first use; s.mu is held.
func (s *Server) linkState() *linkState {
	if s.links == nil {
		s.links = &linkState{byToken: map[string]*Link{}, active: map[int64]*Link{}, secret: s.random(32),
			cache: map[string]linkCache{}, attempts: map[string]*window{}, lapsed: map[int64]bool{}}
	}
	return s.links
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
	s       *Server
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

// current is the row as a request sees it now; s.mu is held. Deleting the
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
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.createLink(a, o.ValidTill, o.DeviceLimit)
	l.row.validTill, l.row.deviceLimit, l.row.enableDownload = o.ValidTill, o.DeviceLimit, !o.NoDownload
	if o.Password != "" {
		l.setPassword(o.Password, o.OpsLimit, o.MemLimit)
	}
	return l
}

// createLink returns the album's active link, or makes one with a new
// token; s.mu is held. An active link comes back unchanged (PL.2).
func (s *Server) createLink(a *Album, validTill int64, deviceLimit int) *Link {
	ls := s.linkState()
	if l := ls.active[a.ID]; l != nil && !l.current().disabled {
		return l
	}
	l := &Link{s: s, ID: s.id(), album: a, token: s.linkToken(), devices: map[device]bool{},
		row: linkRow{validTill: validTill, deviceLimit: deviceLimit, enableDownload: true, enableJoin: true}}
	ls.byToken[l.token] = l
	ls.active[a.ID] = l
	a.updated = s.now() // a new link bumps the album (PL.2)
	return l
}

// linkToken is museum's access token: 10 characters of [2-9A-Z], the first
// ten of a shortuuid upper-cased (PL.1); s.mu is held.
func (s *Server) linkToken() string {
	const chars = "23456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for {
		b := s.random(10)
		for i := range b {
			b[i] = chars[int(b[i])%len(chars)]
		}
		if s.links.byToken[string(b)] == nil {
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
	salt := l.s.random(keys.SaltSize)
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
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.row.disabled = true
}

// SetPassword gives the link a password (cheap Argon2id parameters), or
// removes it with "". A JWT of the old password stops working (PL.6).
func (l *Link) SetPassword(pw string) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if pw == "" {
		l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = "", nil, 0, 0
		return
	}
	l.setPassword(pw, 0, 0)
}

// SetValidTill sets the link's expiry (µs on ServerTime's clock; 0: never).
func (l *Link) SetValidTill(us int64) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.row.validTill = us
}

// SetDeviceLimit sets the link's device limit (0: none; 50 means 500).
func (l *Link) SetDeviceLimit(n int) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.row.deviceLimit = n
}

// SetDownload turns enableDownload on or off.
func (l *Link) SetDownload(on bool) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.row.enableDownload = on
}

// Devices is how many (IP, User-Agent) pairs the link has admitted and
// recorded (PL.5).
func (l *Link) Devices() int {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return len(l.devices)
}

// Reads are the /info and /diff requests the link admitted, oldest first,
// so a test can see which device token a reader kept and sent back.
func (l *Link) Reads() []LinkRead {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return slices.Clone(l.reads)
}

// LapseSubscription ends u's subscription: u's links answer 410 "no
// active subscription" (PL.4).
func (s *Server) LapseSubscription(u *User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.linkState().lapsed[u.ID] = true
}

// ServerTime is the server's clock (µs): what link expiry, the stale
// cache and the password rate limit are judged by. Advance moves it.
func (s *Server) ServerTime() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock
}

// publicURL is museum's PublicURL of a link, as its owner sees it (PL.2).
func (l *Link) publicURL() map[string]any {
	r := l.row
	out := map[string]any{"url": AlbumsURL + "/?t=" + l.token, "deviceLimit": r.deviceLimit, "validTill": r.validTill,
		"enableDownload": r.enableDownload, "enableCollect": r.enableCollect, "enableComment": r.enableComment,
		"enableJoin": r.enableJoin, "passwordEnabled": r.passHash != ""}
	if r.passHash != "" {
		out["nonce"], out["opsLimit"], out["memLimit"] = keys.EncodeB64(r.nonce), r.opsLimit, r.memLimit
	}
	return out
}

// ownedAlbum returns album id when u may manage its link, or answers as
// museum does: 404 unknown, 403 not the owner; s.mu is held.
func (s *Server) ownedAlbum(w http.ResponseWriter, u *User, id int64) *Album {
	a := s.collections[id]
	switch {
	case a == nil || a.deleted:
		apiErr(w, 404, "", "")
	case a.Owner != u:
		apiErr(w, 403, "", "")
	default:
		return a
	}
	return nil
}

// createShareURL is POST /collections/share-url (PL.2): no validation;
// an active link comes back unchanged, body ignored; uncategorized 400.
func (s *Server) createShareURL(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.ownedAlbum(w, u, in.CollectionID)
	if a == nil {
		return
	}
	if a.Type == "uncategorized" {
		apiErr(w, 400, "BAD_REQUEST", "")
		return
	}
	had := s.linkState().active[a.ID]
	l := s.createLink(a, in.ValidTill, in.DeviceLimit)
	if l != had {
		l.row.enableCollect, l.row.enableComment = in.EnableCollect, in.EnableComment
		l.row.enableJoin = in.EnableJoin == nil || *in.EnableJoin
	}
	writeJSON(w, 200, map[string]any{"result": l.publicURL()})
}

// updateShareURL is PUT /collections/share-url with museum's validation
// (ente.UpdatePublicAccessTokenRequest.Validate, PL.2); omitted fields
// stay as they are.
func (s *Server) updateShareURL(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	var in shareURLUpdate
	if !decodeBody(w, r, &in) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg := in.refusal(s.clock); msg != "" {
		apiErr(w, 400, "BAD_REQUEST", msg)
		return
	}
	a := s.ownedAlbum(w, u, in.CollectionID)
	if a == nil {
		return
	}
	l := s.linkState().active[a.ID]
	if l == nil || l.current().disabled {
		apiErr(w, 404, "", "")
		return
	}
	applyUpdate(&l.row, in.ValidTill, in.DeviceLimit, in.EnableDownload, in.EnableCollect, in.EnableComment, in.EnableJoin)
	switch {
	case in.allPass():
		nonce, _ := keys.DecodeB64(*in.Nonce)
		l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = *in.PassHash, nonce, *in.OpsLimit, *in.MemLimit
	case in.DisablePassword != nil && *in.DisablePassword:
		l.row.passHash, l.row.nonce, l.row.opsLimit, l.row.memLimit = "", nil, 0, 0
	}
	a.updated = s.now() // a changed link bumps the album (PL.2)
	writeJSON(w, 200, map[string]any{"result": l.publicURL()})
}

// shareURLUpdate is the body of PUT /collections/share-url.
type shareURLUpdate struct {
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

func (in *shareURLUpdate) allPass() bool {
	return in.PassHash != nil && in.Nonce != nil && in.MemLimit != nil && in.OpsLimit != nil
}

func (in *shareURLUpdate) noPass() bool {
	return in.PassHash == nil && in.Nonce == nil && in.MemLimit == nil && in.OpsLimit == nil
}

// refusal is museum's 400 message for an update it refuses at clock, or "".
func (in *shareURLUpdate) refusal(clock int64) string {
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

// applyUpdate sets the fields a PUT names.
func applyUpdate(r *linkRow, validTill *int64, deviceLimit *int, download, collect, comment, join *bool) {
	if validTill != nil {
		r.validTill = *validTill
	}
	if deviceLimit != nil {
		r.deviceLimit = *deviceLimit
	}
	for _, f := range []struct {
		in  *bool
		out *bool
	}{{download, &r.enableDownload}, {collect, &r.enableCollect}, {comment, &r.enableComment}, {join, &r.enableJoin}} {
		if f.in != nil {
			*f.out = *f.in
		}
	}
}

// deleteShareURL is DELETE /collections/share-url/:id: 200 with no body,
// idempotent; the link is off for good and a later POST mints a new token
// (PL.2).
func (s *Server) deleteShareURL(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authUser(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		apiErr(w, 400, "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.ownedAlbum(w, u, id)
	if a == nil {
		return
	}
	if l := s.linkState().active[a.ID]; l != nil {
		l.row.disabled = true
		delete(s.links.active, a.ID)
	}
	w.WriteHeader(200)
}
