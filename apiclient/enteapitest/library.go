package enteapitest

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/srp"
	"github.com/quak-photos/quak/download/secretstream"
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

// User is an account on the fake server.
type User struct {
	s        *Server
	ID       int64
	Email    string
	Password string
	opts     UserOptions

	srpUserID string
	srpSalt   []byte
	verifier  []byte

	MasterKey, SecretKey, PublicKey []byte
	attrs                           apiclient.KeyAttributes

	ottLive   bool
	ottWrong  int
	totpWrong int
	usedTOTPs map[string]bool
	gone      bool // the account was deleted
}

// DeleteAccount deletes u's account as museum does for a sharer: the
// albums u shared leave their sharees' listings with no tombstone, and
// their diffs answer 404.
func (u *User) DeleteAccount() {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	u.gone = true
}

// AddUser creates an account with real keys and, unless told otherwise, SRP.
func (s *Server) AddUser(email, password string, o UserOptions) *User {
	if o.OpsLimit == 0 {
		o.OpsLimit = 1
	}
	if o.MemLimit == 0 {
		o.MemLimit = 8 << 10
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &User{s: s, ID: s.id(), Email: strings.ToLower(email), Password: password, opts: o, usedTOTPs: map[string]bool{}}
	kekSalt := s.random(keys.SaltSize)
	kek, err := keys.DeriveKEK([]byte(password), kekSalt, o.OpsLimit, o.MemLimit)
	if err != nil {
		panic(err)
	}
	u.MasterKey = s.random(keys.KeySize)
	pub, sec, err := keys.NewKeyPair(s.rand)
	if err != nil {
		panic(err)
	}
	u.PublicKey, u.SecretKey = pub, sec
	recovery := s.random(keys.KeySize)
	n1, n2, n3, n4 := s.random(24), s.random(24), s.random(24), s.random(24)
	u.attrs = apiclient.KeyAttributes{
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
		u.srpUserID = uuid(s.random(16))
		u.srpSalt = s.random(16)
		u.verifier = srp.Verifier([]byte(u.srpUserID), loginKey, u.srpSalt)
	}
	s.users[u.ID] = u
	return u
}

func uuid(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (s *Server) userByEmail(email string) *User {
	email = strings.ToLower(strings.TrimSpace(email))
	for _, u := range s.users {
		if u.Email == email {
			return u
		}
	}
	return nil
}

// Token logs u in directly and returns a token for the Photos app, so tests
// that are not about login can skip it.
func (u *User) Token() string {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	return base64.URLEncoding.EncodeToString(u.s.newToken(u, "photos"))
}

// newToken mints a token for u under app; s.mu is held.
func (s *Server) newToken(u *User, app string) []byte {
	raw := s.random(32)
	s.tokens[base64.URLEncoding.EncodeToString(raw)] = token{userID: u.ID, pkg: app}
	return raw
}

// TokenCount is how many live tokens u has (logout removes one).
func (u *User) TokenCount() int {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	n := 0
	for _, t := range u.s.tokens {
		if t.userID == u.ID {
			n++
		}
	}
	return n
}

// RevokeSessions ends every session of u, as "log out of all devices" in
// Ente's apps does: each later request with one of its tokens gets 401.
func (u *User) RevokeSessions() {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	for k, t := range u.s.tokens {
		if t.userID == u.ID {
			delete(u.s.tokens, k)
		}
	}
}

// ApprovePasskey completes the browser half of u's pending passkey logins.
func (u *User) ApprovePasskey() {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	for _, p := range u.s.passkeys {
		if p.user == u {
			p.verified = true
		}
	}
}

// Album is a collection on the fake server.
type Album struct {
	s             *Server
	ID            int64
	Owner         *User
	Name          string
	Type          string
	key           []byte
	visibility    int
	updated       int64
	deleted       bool
	shares        map[int64]*share
	entries       map[int64]*entry
	neverEnding   bool
	endless       bool // each listing page changes what it served (for endlessPages pages)
	endlessServed int
}

type share struct {
	user       *User
	role       string
	sealedKey  []byte
	removed    bool
	updated    int64
	visibility int
}

type entry struct {
	file    *File
	encKey  []byte
	nonce   []byte
	deleted bool
	updated int64
}

// AddAlbum creates an album of type "album".
func (u *User) AddAlbum(name string) *Album { return u.addCollection(name, "album") }

// AddCollection creates a collection of any type ("favorites",
// "uncategorized", "folder", …).
func (u *User) AddCollection(name, typ string) *Album { return u.addCollection(name, typ) }

func (u *User) addCollection(name, typ string) *Album {
	s := u.s
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &Album{s: s, ID: s.id(), Owner: u, Name: name, Type: typ, key: s.random(32),
		shares: map[int64]*share{}, entries: map[int64]*entry{}}
	a.updated = s.now()
	s.collections[a.ID] = a
	return a
}

// SetVisibility sets the owner's visibility: 0 visible, 1 archived, 2 hidden.
func (a *Album) SetVisibility(v int) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.visibility = v
	a.updated = a.s.now()
}

// Rename changes the album's name.
func (a *Album) Rename(name string) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.Name = name
	a.updated = a.s.now()
}

// Delete deletes the album: it lists as a tombstone and its diff answers 404.
func (a *Album) Delete() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.deleted = true
	a.updated = a.s.now()
}

// ShareSealedToOther shares the album with u, but with its key sealed to
// someone else's public key: u cannot open it.
func (a *Album) ShareSealedToOther(u *User) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	pub, _, err := keys.NewKeyPair(s.rand)
	if err != nil {
		panic(err)
	}
	sealed, err := keys.SealedBoxSeal(a.key, pub, s.rand)
	if err != nil {
		panic(err)
	}
	now := s.now()
	a.shares[u.ID] = &share{user: u, role: "VIEWER", sealedKey: sealed, updated: now}
	a.updated = now
}

// NeverEnding makes the album's diff answer hasMore forever, even past its
// last entry: a server bug a client must not loop on.
func (a *Album) NeverEnding() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.neverEnding = true
}

// Endless makes the album's diff go on and on (endlessPages pages), each
// page serving the same files again at later times: a hostile server a
// client must not follow without end.
func (a *Album) Endless() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.neverEnding, a.endless = true, true
}

// ShareWith shares the album with u, its key sealed to u's public key.
func (a *Album) ShareWith(u *User, role string) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	sealed, err := keys.SealedBoxSeal(a.key, u.PublicKey, s.rand)
	if err != nil {
		panic(err)
	}
	now := s.now()
	a.shares[u.ID] = &share{user: u, role: role, sealedKey: sealed, updated: now}
	a.updated = now
}

// Unshare removes u from the album; u sees a tombstone.
func (a *Album) Unshare(u *User) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if sh := a.shares[u.ID]; sh != nil {
		sh.removed = true
		sh.updated = a.s.now()
		a.updated = sh.updated
	}
}

// Add puts an existing file into the album (same file, same key).
func (a *Album) Add(f *File) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.addLocked(f)
}

func (a *Album) addLocked(f *File) {
	nonce := a.s.random(24)
	sealWith := a.key
	if f.spec.BadKey {
		sealWith = a.s.random(32)
	}
	e := &entry{file: f, encKey: keys.SecretboxSeal(f.key, nonce, sealWith), nonce: nonce, updated: a.s.now()}
	a.entries[f.ID] = e
	a.updated = e.updated
}

// Remove takes f out of the album: its entry turns into a deletion marker.
func (a *Album) Remove(f *File) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if e := a.entries[f.ID]; e != nil {
		e.deleted = true
		e.updated = a.s.now()
		a.updated = e.updated
	}
}

// FileSpec describes a file to add.
type FileSpec struct {
	Title    string
	FileType int // 0 image, 1 video, 2 live photo (a zip), anything else: opaque
	// Data is the plaintext; or, when Data is nil, Size bytes of Content(Size,
	// Seed) generated on the fly, never held in memory.
	Data []byte
	Size int64
	Seed byte

	CreationTime, ModificationTime int64 // µs; default: the server clock
	Latitude, Longitude            float64
	// ZeroLocation writes latitude and longitude 0, 0 into the metadata, as
	// some uploaders do for "no location" (Ente's apps read it as none).
	ZeroLocation        bool
	Caption, EditedName string
	EditedTime          int64
	// EditedLatitude and EditedLongitude are a location edited in Ente's
	// apps (pubMagicMetadata lat and long), written when either is not 0.
	EditedLatitude, EditedLongitude float64
	// OffsetTime is the "±HH:mm" UTC offset of the place the photo was
	// taken (pubMagicMetadata.offsetTime), written when set.
	OffsetTime string

	Thumbnail   []byte // plaintext JPEG; default a small real one (FakeJPEG)
	NoThumbnail bool   // no thumbnail row: preview answers 404
	// NoInfo leaves files.info NULL, as for older uploads: the listing has
	// no info, and POST /files/info reads object_keys and fills it in.
	NoInfo        bool
	LostThumbnail bool // a row, but the object is gone: the store answers 404
	// CorruptThumbnail stores the thumbnail with one ciphertext bit flipped.
	CorruptThumbnail bool
	// StaticThumbnail is the web client's failure case: Ente's black
	// placeholder JPEG as the thumbnail and metadata.hasStaticThumbnail.
	// NoThumb is the mobile apps' one: the placeholder and
	// pubMagicMetadata.noThumb.
	StaticThumbnail, NoThumb bool
	// Hash overrides the metadata hash (to model a mismatch). Default: the
	// BLAKE2b-512 of the plaintext, or of each part for a live photo.
	Hash string
	// NoHash writes metadata without a hash, as some old uploads have.
	NoHash bool
	// Materialize encrypts a generated file once, up front, and serves the
	// bytes, so serving costs the server no CPU (for benchmarks of quak).
	Materialize bool
	// Permanent faults: the original's bytes are gone from the store
	// (LostFile), one ciphertext bit is flipped at rest (CorruptAtRest), or
	// the file key in its album entries is sealed under a wrong key (BadKey).
	LostFile, CorruptAtRest, BadKey bool
	// Hostile servers: AnnounceSize is the fileSize its info claims (the
	// bytes served stay the real ones); KeyLen gives the file a key of that
	// many bytes; RedirectTo is where /files/download sends the client;
	// EndlessBody serves a body without length that never ends.
	AnnounceSize int64
	KeyLen       int
	RedirectTo   string
	EndlessBody  bool
	// BadMetadata seals text that is not JSON as the file's metadata.
	BadMetadata bool
}

// File is a file on the fake server.
type File struct {
	s     *Server
	ID    int64
	Owner *User
	key   []byte
	spec  FileSpec

	fileHeader, thumbHeader []byte
	fileObject, thumbObject string
	// thumbInfo is files.info.thumbSize: the thumbnail's size at upload,
	// which museum never updates when a thumbnail is replaced. thumbRecorded
	// is object_keys.size: the current thumbnail object's size, the bound
	// PUT /files/thumbnail checks and updates.
	thumbInfo, thumbRecorded int64
	infoNull                 bool
	metaEnc, metaHeader      []byte
	pubMagic                 *apiclient.MagicMetadata
	trashed                  bool
}

// AddFile uploads a file into the album.
func (a *Album) AddFile(spec FileSpec) *File { return a.AddFileBy(a.Owner, spec) }

// AddFileBy uploads a file that u owns into the album: a collaborator's
// file in a shared album.
func (a *Album) AddFileBy(u *User, spec FileSpec) *File {
	s := a.s
	f := a.newFile(u, spec)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[f.ID] = f
	a.addLocked(f)
	return f
}

// AddFileLate uploads a file the way museum commits one that arrives
// while others are committed: its updationTime is stamped now, when the
// request arrives, but it stays invisible until commit is called (museum
// first checks the objects in the store, retrying for up to ~1.5 s). At
// commit the entry appears with that earlier stamp, and the album's
// updationTime is set to it: overwritten, not maxed. Whatever changed in
// between has later times, so the entry appears below a cursor a reader
// may already have advanced past it, and the album's time can go back.
func (a *Album) AddFileLate(spec FileSpec) (f *File, commit func()) {
	s := a.s
	f = a.newFile(a.Owner, spec)
	s.mu.Lock()
	stamp := s.now()
	s.mu.Unlock()
	return f, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.files[f.ID] = f
		a.addLocked(f)
		a.entries[f.ID].updated = stamp
		a.updated = stamp
	}
}

// newFile makes a file of owner's, its objects and metadata, not yet in
// any album.
func (a *Album) newFile(owner *User, spec FileSpec) *File {
	s := a.s
	hash := spec.Hash
	if hash == "" {
		hash = contentHash(spec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if spec.CreationTime == 0 {
		spec.CreationTime = now
	}
	if spec.ModificationTime == 0 {
		spec.ModificationTime = spec.CreationTime
	}
	spec.Hash = hash
	keyLen := 32
	if spec.KeyLen > 0 {
		keyLen = spec.KeyLen
	}
	f := &File{s: s, ID: s.id(), Owner: owner, key: s.random(keyLen), spec: spec, infoNull: spec.NoInfo}
	f.fileHeader = s.random(secretstream.HeaderSize)
	f.fileObject = fmt.Sprintf("%d/file-%d", owner.ID, f.ID)
	f.storeObjects()
	f.encryptMetadata()
	return f
}

// storeObjects puts f's file and thumbnail objects in the store, as its
// spec asks (materialized, corrupt, lost, no thumbnail, a placeholder);
// s.mu is held.
func (f *File) storeObjects() {
	s := f.s
	s.objects[f.fileObject] = f.fileContent()
	if f.spec.Materialize || f.spec.CorruptAtRest {
		var buf bytes.Buffer
		buf.Grow(int(s.objects[f.fileObject].size))
		if err := s.objects[f.fileObject].writeTo(&buf); err != nil {
			panic(err)
		}
		data := buf.Bytes()
		if f.spec.CorruptAtRest {
			data[len(data)/2] ^= 0x10
		}
		s.objects[f.fileObject] = &object{data: data, size: int64(len(data))}
	}
	s.objects[f.fileObject].lost = f.spec.LostFile
	s.objects[f.fileObject].etag = fmt.Sprintf("%d-v1", f.ID)
	if !f.spec.NoThumbnail {
		thumb := f.spec.Thumbnail
		switch {
		case f.spec.StaticThumbnail || f.spec.NoThumb:
			thumb = PlaceholderJPEG()
		case thumb == nil:
			thumb = FakeJPEG(f.spec.Title)
		}
		f.thumbHeader = s.random(secretstream.HeaderSize)
		f.thumbObject = fmt.Sprintf("%d/thumb-%d", f.Owner.ID, f.ID)
		enc := mustSeal(f.sealKey(), f.thumbHeader, thumb)
		if f.spec.CorruptThumbnail {
			enc[len(enc)/2] ^= 1
		}
		o := &object{data: enc, size: int64(len(enc))}
		f.thumbInfo, f.thumbRecorded = o.size, o.size
		if f.spec.LostThumbnail {
			o.lost = true
		}
		s.objects[f.thumbObject] = o
	}
}

// Content is the generated plaintext of a FileSpec with Data nil: byte i is
// byte(i*131 + seed).
func Content(size int64, seed byte) io.Reader {
	return io.LimitReader(&patternReader{seed: seed}, size)
}

type patternReader struct {
	i    int64
	seed byte
}

// Read copies from one period of the pattern (it repeats every 256 bytes),
// so serving gigabytes costs little CPU.
func (p *patternReader) Read(b []byte) (int, error) {
	var period [512]byte
	for k := range period {
		period[k] = byte(k*131) + p.seed
	}
	n := 0
	for n < len(b) {
		c := copy(b[n:], period[p.i%256:p.i%256+256])
		n += c
		p.i += int64(c)
	}
	return n, nil
}

func (spec FileSpec) plaintext() io.Reader {
	if spec.Data != nil {
		return bytes.NewReader(spec.Data)
	}
	return Content(spec.Size, spec.Seed)
}

func (spec FileSpec) plainSize() int64 {
	if spec.Data != nil {
		return int64(len(spec.Data))
	}
	return spec.Size
}

// contentHash is Ente's metadata hash of the spec's plaintext.
func contentHash(spec FileSpec) string {
	if spec.FileType == 2 && spec.Data != nil {
		if h, ok := livePhotoHash(spec.Data); ok {
			return h
		}
	}
	h := keys.NewHash()
	if _, err := io.Copy(h, spec.plaintext()); err != nil {
		panic(err)
	}
	return keys.EncodeB64(h.Sum(nil))
}

// livePhotoHash is "imageHash:videoHash" over the zip's two parts.
func livePhotoHash(zipped []byte) (string, bool) {
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		return "", false
	}
	var img, vid string
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			return "", false
		}
		h := keys.NewHash()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return "", false
		}
		switch {
		case strings.HasPrefix(zf.Name, "image"):
			img = keys.EncodeB64(h.Sum(nil))
		case strings.HasPrefix(zf.Name, "video"):
			vid = keys.EncodeB64(h.Sum(nil))
		}
	}
	return img + ":" + vid, img != "" && vid != ""
}

// LivePhoto zips an image and a video part as Ente's clients do.
func LivePhoto(imageExt string, image []byte, videoExt string, video []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, part := range []struct {
		name string
		data []byte
	}{{"image." + imageExt, image}, {"video." + videoExt, video}} {
		w, err := zw.Create(part.name)
		if err != nil {
			panic(err)
		}
		_, _ = w.Write(part.data)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// FakeJPEG is a small real JPEG (96×72, colours drawn from name), as a
// thumbnail Ente's clients would have made.
func FakeJPEG(name string) []byte {
	h := keys.NewHash()
	_, _ = h.Write([]byte(name))
	sum := h.Sum(nil)
	img := image.NewRGBA(image.Rect(0, 0, 96, 72))
	for y := 0; y < 72; y++ {
		for x := 0; x < 96; x++ {
			img.Set(x, y, color.RGBA{sum[0] + byte(x), sum[1] + byte(y), sum[2] + byte(x^y), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// PlaceholderJPEG is a black 300×150 JPEG like the fixed one Ente's clients
// store when they cannot make a thumbnail.
func PlaceholderJPEG() []byte {
	img := image.NewGray(image.Rect(0, 0, 300, 150))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 75}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func mustSeal(key, header, plaintext []byte) []byte {
	ct, err := secretstream.SealBlob(key, header, plaintext)
	if err != nil {
		panic(err)
	}
	return ct
}

// fileContent is the encrypted original, generated as it is served when the
// plaintext is generated too.
func (f *File) fileContent() *object {
	size := secretstream.CiphertextSize(f.spec.plainSize())
	key, header, spec := f.key, f.fileHeader, f.spec
	if spec.EndlessBody {
		return &object{size: -1, gen: func(w io.Writer) error {
			buf := make([]byte, 32<<10)
			for {
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}}
	}
	if len(key) != secretstream.KeySize {
		return &object{data: []byte("not encrypted under any key"), size: 27}
	}
	return &object{size: size, gen: func(w io.Writer) error {
		sw, err := secretstream.NewWriter(w, key, header)
		if err != nil {
			return err
		}
		if _, err := io.Copy(sw, spec.plaintext()); err != nil {
			return err
		}
		return sw.Close()
	}}
}

// encryptMetadata (re)writes the metadata and public magic metadata blobs.
func (f *File) encryptMetadata() {
	sp := f.spec
	md := map[string]any{
		"fileType": sp.FileType, "title": sp.Title, "creationTime": sp.CreationTime,
		"modificationTime": sp.ModificationTime, "hash": sp.Hash,
	}
	if sp.NoHash {
		delete(md, "hash")
	}
	if sp.Latitude != 0 || sp.Longitude != 0 || sp.ZeroLocation {
		md["latitude"], md["longitude"] = sp.Latitude, sp.Longitude
	}
	if sp.StaticThumbnail {
		md["hasStaticThumbnail"] = true
	}
	b, _ := json.Marshal(md)
	if sp.BadMetadata {
		b = []byte(`{"title": "unterminated`)
	}
	f.metaHeader = f.s.random(secretstream.HeaderSize)
	f.metaEnc = mustSeal(f.sealKey(), f.metaHeader, b)

	pub := map[string]any{}
	if sp.Caption != "" {
		pub["caption"] = sp.Caption
	}
	if sp.EditedName != "" {
		pub["editedName"] = sp.EditedName
	}
	if sp.EditedTime != 0 {
		pub["editedTime"] = sp.EditedTime
	}
	if sp.NoThumb {
		pub["noThumb"] = true
	}
	if sp.EditedLatitude != 0 || sp.EditedLongitude != 0 {
		pub["lat"], pub["long"] = sp.EditedLatitude, sp.EditedLongitude
	}
	if sp.OffsetTime != "" {
		pub["offsetTime"] = sp.OffsetTime
	}
	if len(pub) == 0 {
		f.pubMagic = nil
		return
	}
	version := 1
	if f.pubMagic != nil {
		version = f.pubMagic.Version + 1
	}
	pb, _ := json.Marshal(pub)
	h := f.s.random(secretstream.HeaderSize)
	f.pubMagic = &apiclient.MagicMetadata{Version: version, Count: len(pub), Data: mustSeal(f.sealKey(), h, pb), Header: h}
}

// Edit changes the file's public magic metadata (caption, edited name or
// time) and bumps it everywhere, as museum does.
func (f *File) Edit(change func(*FileSpec)) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	change(&f.spec)
	f.encryptMetadata()
	f.touch()
}

// Reupload replaces the file's content (new bytes, new decryption header,
// new object), as an edit saved through /files/update does, and bumps it.
func (f *File) Reupload(data []byte) {
	s := f.s
	hash := contentHash(FileSpec{Data: data})
	s.mu.Lock()
	defer s.mu.Unlock()
	f.spec.Data, f.spec.Size, f.spec.Hash = data, 0, hash
	f.fileHeader = s.random(secretstream.HeaderSize)
	s.objects[f.fileObject] = f.fileContent()
	s.objects[f.fileObject].etag = fmt.Sprintf("%d-v%d", f.ID, s.now())
	f.encryptMetadata()
	f.touch()
}

// Trash moves the file to the trash: its entry in every album becomes a
// deletion marker.
func (f *File) Trash() {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.trashed = true
	now := f.s.now()
	for _, a := range f.s.collections {
		if e := a.entries[f.ID]; e != nil && !e.deleted {
			e.deleted, e.updated = true, now
			a.updated = now
		}
	}
}

// touch bumps the file's entries and their albums; s.mu is held.
func (f *File) touch() {
	now := f.s.now()
	for _, a := range f.s.collections {
		if e := a.entries[f.ID]; e != nil && !e.deleted {
			e.updated = now
			a.updated = now
		}
	}
}

// Plaintext returns the file's original bytes, for comparing with a backup.
func (f *File) Plaintext() []byte {
	b, err := io.ReadAll(f.spec.plaintext())
	if err != nil {
		panic(err)
	}
	return b
}

// ThumbnailHeader is the file's current thumbnail decryption header.
func (f *File) ThumbnailHeader() []byte {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return append([]byte(nil), f.thumbHeader...)
}

// sealKey is the key the file's blobs are sealed under: its own, or, for a
// file given a key of the wrong length, one it cannot have.
func (f *File) sealKey() []byte {
	if len(f.key) == secretstream.KeySize {
		return f.key
	}
	return make([]byte, secretstream.KeySize)
}

// Key is the file key (tests decrypt what quak uploads with it).
func (f *File) Key() []byte { return f.key }

// Thumbnail returns the encrypted thumbnail object as the store holds it
// now, and false when there is no row or its bytes are gone.
func (f *File) Thumbnail() ([]byte, bool) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	o := f.s.objects[f.thumbObject]
	if f.thumbObject == "" || o == nil || o.lost {
		return nil, false
	}
	return bytes.Clone(o.data), true
}

// LoseThumbnail deletes the thumbnail's bytes from the store, keeping its
// row and recorded size: what Ente's users see as a grey tile.
func (f *File) LoseThumbnail() {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if o := f.s.objects[f.thumbObject]; o != nil {
		o.lost = true
	}
}

// BreakThumbnailHeader makes the file's thumbnail decryption header
// malformed (too short): a bad record, not damaged bytes.
func (f *File) BreakThumbnailHeader() {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.thumbHeader = f.thumbHeader[:10]
}

// RecordThumbnailSize sets the thumbnail's size in museum's object_keys row
// to n, as an earlier replacement would have left it, without touching
// files.info's thumbSize (museum never does).
func (f *File) RecordThumbnailSize(n int64) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.thumbRecorded = n
}

// RecordedThumbnailSize is object_keys.size of the thumbnail (0 without a
// row), and InfoThumbnailSize files.info's thumbSize.
func (f *File) RecordedThumbnailSize() int64 {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.thumbRecorded
}

// InfoThumbnailSize is files.info's thumbSize: the size at upload.
func (f *File) InfoThumbnailSize() int64 {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.thumbInfo
}

// Spec is the file's current description (edits included).
func (f *File) Spec() FileSpec {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.spec
}

// FileHeader is the decryption header of the file's current content.
func (f *File) FileHeader() []byte {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return append([]byte(nil), f.fileHeader...)
}
