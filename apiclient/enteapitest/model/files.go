package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/quak-photos/quak/apiclient/secretstream"
)

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
	m     *Museum
	ID    int64
	Owner *User
	key   []byte
	spec  FileSpec

	content  part
	thumb    thumbPart
	meta     sealedMeta
	infoNull bool // files.info is NULL, as for older uploads
	trashed  bool
}

// part is one of a file's objects: where it is and its header.
type part struct {
	object string
	header []byte
}

// thumbPart is the thumbnail's object. info is files.info.thumbSize: the
// thumbnail's size at upload, which museum never updates when a thumbnail
// is replaced. recorded is object_keys.size: the current thumbnail
// object's size, the bound PUT /files/thumbnail checks and updates.
type thumbPart struct {
	part
	info, recorded int64
}

// sealedMeta is the file's metadata and public magic metadata, sealed.
type sealedMeta struct {
	data, header []byte
	pub          *Magic
}

// Magic is a magic metadata envelope: a blob of JSON sealed under a key.
type Magic struct {
	Version, Count int
	Data, Header   []byte
}

// newFile makes a file of owner's, its objects and metadata, not yet in
// any album.
func (m *Museum) newFile(owner *User, spec FileSpec) *File {
	hash := spec.Hash
	if hash == "" {
		hash = contentHash(spec)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
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
	f := &File{m: m, ID: m.id(), Owner: owner, key: m.random(keyLen), spec: spec, infoNull: spec.NoInfo}
	f.content.header = m.random(secretstream.HeaderSize)
	f.content.object = fmt.Sprintf("%d/file-%d", owner.ID, f.ID)
	f.storeObjects()
	f.encryptMetadata()
	return f
}

// storeObjects puts f's file and thumbnail objects in the store, as its
// spec asks (materialized, corrupt, lost, no thumbnail, a placeholder);
// m.mu is held.
func (f *File) storeObjects() {
	objects := f.m.store.objects
	o := f.contentObject()
	if f.spec.Materialize || f.spec.CorruptAtRest {
		var buf bytes.Buffer
		buf.Grow(int(o.size))
		if err := o.Write(&buf); err != nil {
			panic(err)
		}
		data := buf.Bytes()
		if f.spec.CorruptAtRest {
			data[len(data)/2] ^= 0x10
		}
		o = &Object{data: data, size: int64(len(data))}
	}
	o.lost = f.spec.LostFile
	o.etag = fmt.Sprintf("%d-v1", f.ID)
	objects[f.content.object] = o
	if f.spec.NoThumbnail {
		return
	}
	thumb := f.spec.Thumbnail
	switch {
	case f.spec.StaticThumbnail || f.spec.NoThumb:
		thumb = PlaceholderJPEG()
	case thumb == nil:
		thumb = FakeJPEG(f.spec.Title)
	}
	f.thumb.header = f.m.random(secretstream.HeaderSize)
	f.thumb.object = fmt.Sprintf("%d/thumb-%d", f.Owner.ID, f.ID)
	enc := mustSeal(f.sealKey(), f.thumb.header, thumb)
	if f.spec.CorruptThumbnail {
		enc[len(enc)/2] ^= 1
	}
	t := &Object{data: enc, size: int64(len(enc)), lost: f.spec.LostThumbnail}
	f.thumb.info, f.thumb.recorded = t.size, t.size
	objects[f.thumb.object] = t
}

// contentObject is the encrypted original, generated as it is served when
// the plaintext is generated too.
func (f *File) contentObject() *Object {
	key, header, spec := f.key, f.content.header, f.spec
	if spec.EndlessBody {
		return &Object{size: -1, gen: func(w io.Writer) error {
			buf := make([]byte, 32<<10)
			for {
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}}
	}
	if len(key) != secretstream.KeySize {
		return &Object{data: []byte("not encrypted under any key"), size: 27}
	}
	return &Object{size: secretstream.CiphertextSize(spec.plainSize()), gen: func(w io.Writer) error {
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

// encryptMetadata (re)writes the metadata and public magic metadata
// blobs; m.mu is held.
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
	f.meta.header = f.m.random(secretstream.HeaderSize)
	f.meta.data = mustSeal(f.sealKey(), f.meta.header, b)

	pub := sp.publicMagic()
	if len(pub) == 0 {
		f.meta.pub = nil
		return
	}
	version := 1
	if f.meta.pub != nil {
		version = f.meta.pub.Version + 1
	}
	pb, _ := json.Marshal(pub)
	h := f.m.random(secretstream.HeaderSize)
	f.meta.pub = &Magic{Version: version, Count: len(pub), Data: mustSeal(f.sealKey(), h, pb), Header: h}
}

// publicMagic is the public magic metadata the spec's edits make.
func (sp FileSpec) publicMagic() map[string]any {
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
	return pub
}

// Edit changes the file's public magic metadata (caption, edited name or
// time) and bumps it everywhere, as museum does.
func (f *File) Edit(change func(*FileSpec)) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	change(&f.spec)
	f.encryptMetadata()
	f.touch()
}

// Reupload replaces the file's content (new bytes, new decryption header,
// new object), as an edit saved through /files/update does, and bumps it.
func (f *File) Reupload(data []byte) {
	m := f.m
	hash := contentHash(FileSpec{Data: data})
	m.mu.Lock()
	defer m.mu.Unlock()
	f.spec.Data, f.spec.Size, f.spec.Hash = data, 0, hash
	f.content.header = m.random(secretstream.HeaderSize)
	o := f.contentObject()
	o.etag = fmt.Sprintf("%d-v%d", f.ID, m.tick())
	m.store.objects[f.content.object] = o
	f.encryptMetadata()
	f.touch()
}

// Trash moves the file to the trash: its entry in every album becomes a
// deletion marker.
func (f *File) Trash() {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	f.trashed = true
	now := f.m.tick()
	for _, a := range f.m.albums {
		if e := a.entries[f.ID]; e != nil && !e.deleted {
			e.deleted, e.updated = true, now
			a.updated = now
		}
	}
}

// touch bumps the file's entries and their albums; m.mu is held.
func (f *File) touch() {
	now := f.m.tick()
	for _, a := range f.m.albums {
		if e := a.entries[f.ID]; e != nil && !e.deleted {
			e.updated = now
			a.updated = now
		}
	}
}

// Plaintext returns the file's original bytes, for comparing with a backup.
func (f *File) Plaintext() []byte {
	b, err := io.ReadAll(f.Spec().plaintext())
	if err != nil {
		panic(err)
	}
	return b
}

// Spec is the file's current description (edits included).
func (f *File) Spec() FileSpec {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.spec
}

// Key is the file key (tests decrypt what quak uploads with it).
func (f *File) Key() []byte { return f.key }

// sealKey is the key the file's blobs are sealed under: its own, or, for a
// file given a key of the wrong length, one it cannot have.
func (f *File) sealKey() []byte {
	if len(f.key) == secretstream.KeySize {
		return f.key
	}
	return make([]byte, secretstream.KeySize)
}

// File returns the file of that id, made by a test or through the API.
func (m *Museum) File(id int64) *File {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.files[id]
}
