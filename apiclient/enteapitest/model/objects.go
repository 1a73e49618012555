package model

import (
	"bytes"
	"io"
	"sync"
)

// Object is what the object store holds under a key: bytes, or a
// generator of its bytes for large files. A stored Object never changes:
// storing again puts a new one, so a request being served keeps its own.
type Object struct {
	data []byte
	gen  func(io.Writer) error
	size int64  // -1: a body without length
	lost bool   // the row exists but the bytes are gone
	etag string // changes when the object is stored again
}

// Size is the object's length, -1 for a body without one.
func (o *Object) Size() int64 { return o.size }

// ETag is the object's entity tag ("" for none).
func (o *Object) ETag() string { return o.etag }

// Write writes the object's bytes to w.
func (o *Object) Write(w io.Writer) error {
	if o.gen != nil {
		return o.gen(w)
	}
	_, err := w.Write(o.data)
	return err
}

// store is the object store's contents; Museum.mu guards objects.
type store struct {
	objects map[string]*Object
	copied  map[string]bool // thumbnail keys committed (museum's object_copies)
	cache   rangeCache
}

func (s *store) init() { s.objects, s.copied = map[string]*Object{}, map[string]bool{} }

// rangeCache holds the last generated object asked for by range, with its
// own lock.
type rangeCache struct {
	mu   sync.Mutex
	key  string
	data []byte
}

// StoreGet is the object under key as the store serves it, nil when
// there is none or its bytes are gone.
func (m *Museum) StoreGet(key string) *Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.store.objects[key]
	if o == nil || o.lost {
		return nil
	}
	return o
}

// ForRange is o with its bytes in memory when it is generated as it is
// served: the ciphertext of a generated object is made from its first byte
// on, so each range of a large file would cost the whole object up to it.
// The last object asked for by range is kept (up to 512 MiB).
func (m *Museum) ForRange(key string, o *Object) *Object {
	if o.gen == nil || o.size < 0 || o.size > 512<<20 {
		return o
	}
	c := &m.store.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	id := key + "\x00" + o.etag
	if c.key != id {
		var buf bytes.Buffer
		buf.Grow(int(o.size))
		if o.gen(&buf) != nil {
			return o
		}
		c.key, c.data = id, buf.Bytes()
	}
	return &Object{data: c.data, size: o.size, etag: o.etag}
}

// StorePut stores data under key with etag, as a PUT to the store or a
// completed multipart upload does.
func (m *Museum) StorePut(key string, data []byte, etag string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store.objects[key] = &Object{data: data, size: int64(len(data)), etag: etag}
}

// PlaceObject puts an object of size zero bytes under key, as if it had
// been uploaded, generated as it is read: for tests of sizes no test can
// send, such as museum's 10 GiB limit.
func (m *Museum) PlaceObject(key string, size int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store.objects[key] = &Object{size: size, gen: func(w io.Writer) error {
		_, err := io.Copy(w, io.LimitReader(zeros{}, size))
		return err
	}}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// ObjectBytes returns the bytes stored under key, and false when there
// are none (or they are generated).
func (m *Museum) ObjectBytes(key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.store.objects[key]
	if o == nil || o.lost || o.gen != nil {
		return nil, false
	}
	return bytes.Clone(o.data), true
}

// canRead is museum's access rule for a file's objects: the owner, or
// anyone the file is shared with through an album; m.mu is held.
func (m *Museum) canRead(u *User, f *File) bool {
	if f.Owner == u {
		return true
	}
	for _, a := range m.albums {
		if e := a.entries[f.ID]; e != nil && !e.deleted && m.readable(u, a.ID) != nil {
			return true
		}
	}
	return false
}

// Download answers GET /files/download/:id (thumb false) and
// /files/preview/:id (thumb true) for u: the object key to redirect to,
// or for a hostile file the URL it redirects to instead. 404 {} for no
// such file or no such object row, 403 {} when u may not read it.
func (m *Museum) Download(u *User, fileID int64, thumb bool) (key, elsewhere string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.files[fileID]
	switch {
	case f == nil:
		return "", "", plain(NotFound)
	case !m.canRead(u, f):
		return "", "", plain(Forbidden)
	}
	key = f.content.object
	if thumb {
		key = f.thumb.object
	}
	switch {
	case key == "":
		return "", "", plain(NotFound)
	case !thumb && f.spec.RedirectTo != "":
		return "", f.spec.RedirectTo, nil
	}
	return key, "", nil
}

// SetETag gives the file's stored object a new ETag, as storing it again
// would: a resume must then start over.
func (f *File) SetETag(tag string) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	o := *f.m.store.objects[f.content.object]
	o.etag = tag
	f.m.store.objects[f.content.object] = &o
}

// FileHeader is the decryption header of the file's current content.
func (f *File) FileHeader() []byte {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return bytes.Clone(f.content.header)
}
