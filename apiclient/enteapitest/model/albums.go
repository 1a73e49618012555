package model

import (
	"github.com/quak-photos/quak/apiclient/keys"
)

// Album is a collection on the fake server.
type Album struct {
	m          *Museum
	ID         int64
	Owner      *User
	Name       string
	Type       string
	key        []byte
	visibility int
	updated    int64
	deleted    bool
	shares     map[int64]*share
	entries    map[int64]*entry
	hostile    hostileListing
}

// hostileListing is how a broken or hostile server lists an album.
type hostileListing struct {
	neverEnding bool // hasMore forever
	endless     bool // each listing page changes what it served (for endlessPages pages)
	served      int  // pages served so far, while endless
}

type share struct {
	user       *User
	role       string
	sealedKey  []byte
	removed    bool
	updated    int64
	visibility int
}

// entry is a file in an album (museum's collection_files row).
type entry struct {
	file    *File
	encKey  []byte
	nonce   []byte
	deleted bool
	added   int64 // when it was first added (created_at)
	updated int64
}

// AddAlbum creates an album of type "album".
func (u *User) AddAlbum(name string) *Album { return u.addCollection(name, "album") }

// AddCollection creates a collection of any type ("favorites",
// "uncategorized", "folder", …).
func (u *User) AddCollection(name, typ string) *Album { return u.addCollection(name, typ) }

func (u *User) addCollection(name, typ string) *Album {
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.newAlbum(u, typ, m.random(32))
	a.Name = name
	return a
}

// newAlbum makes an album of u's under key, stamped now; m.mu is held.
func (m *Museum) newAlbum(u *User, typ string, key []byte) *Album {
	a := &Album{m: m, ID: m.id(), Owner: u, Type: typ, key: key, shares: map[int64]*share{}, entries: map[int64]*entry{}}
	a.updated = m.tick()
	m.albums[a.ID] = a
	return a
}

// SetVisibility sets the owner's visibility: 0 visible, 1 archived, 2 hidden.
func (a *Album) SetVisibility(v int) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	a.visibility = v
	a.updated = a.m.tick()
}

// Rename changes the album's name.
func (a *Album) Rename(name string) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	a.Name = name
	a.updated = a.m.tick()
}

// Delete deletes the album: it lists as a tombstone and its diff answers 404.
func (a *Album) Delete() {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	a.deleted = true
	a.updated = a.m.tick()
}

// ShareWith shares the album with u, its key sealed to u's public key.
func (a *Album) ShareWith(u *User, role string) {
	a.share(u, role, func() []byte { return u.PublicKey })
}

// ShareSealedToOther shares the album with u, but with its key sealed to
// someone else's public key: u cannot open it.
func (a *Album) ShareSealedToOther(u *User) {
	a.share(u, "VIEWER", func() []byte {
		pub, _, err := keys.NewKeyPair(a.m.rand)
		if err != nil {
			panic(err)
		}
		return pub
	})
}

// share shares the album with u, its key sealed to the public key pub
// returns (called with m.mu held).
func (a *Album) share(u *User, role string, pub func() []byte) {
	m := a.m
	m.mu.Lock()
	defer m.mu.Unlock()
	sealed, err := keys.SealedBoxSeal(a.key, pub(), m.rand)
	if err != nil {
		panic(err)
	}
	now := m.tick()
	a.shares[u.ID] = &share{user: u, role: role, sealedKey: sealed, updated: now}
	a.updated = now
}

// Unshare removes u from the album; u sees a tombstone.
func (a *Album) Unshare(u *User) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	if sh := a.shares[u.ID]; sh != nil {
		sh.removed = true
		sh.updated = a.m.tick()
		a.updated = sh.updated
	}
}

// NeverEnding makes the album's diff answer hasMore forever, even past its
// last entry: a server bug a client must not loop on.
func (a *Album) NeverEnding() {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	a.hostile.neverEnding = true
}

// Endless makes the album's diff go on and on (endlessPages pages), each
// page serving the same files again at later times: a hostile server a
// client must not follow without end.
func (a *Album) Endless() {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	a.hostile.neverEnding, a.hostile.endless = true, true
}

// Add puts an existing file into the album (same file, same key).
func (a *Album) Add(f *File) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	a.addLocked(f)
}

// addLocked puts f into the album, its key sealed under the album's (or,
// for a BadKey file, under another); m.mu is held.
func (a *Album) addLocked(f *File) {
	nonce := a.m.random(24)
	sealWith := a.key
	if f.spec.BadKey {
		sealWith = a.m.random(32)
	}
	now := a.m.tick()
	e := &entry{file: f, encKey: keys.SecretboxSeal(f.key, nonce, sealWith), nonce: nonce, added: now, updated: now}
	if old := a.entries[f.ID]; old != nil {
		e.added = old.added
	}
	a.entries[f.ID] = e
	a.updated = e.updated
}

// Remove takes f out of the album: its entry turns into a deletion marker.
func (a *Album) Remove(f *File) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	if e := a.entries[f.ID]; e != nil {
		e.deleted = true
		e.updated = a.m.tick()
		a.updated = e.updated
	}
}

// AddFile uploads a file into the album.
func (a *Album) AddFile(spec FileSpec) *File { return a.AddFileBy(a.Owner, spec) }

// AddFileBy uploads a file that u owns into the album: a collaborator's
// file in a shared album.
func (a *Album) AddFileBy(u *User, spec FileSpec) *File {
	m := a.m
	f := m.newFile(u, spec)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[f.ID] = f
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
	m := a.m
	f = m.newFile(a.Owner, spec)
	m.mu.Lock()
	stamp := m.tick()
	m.mu.Unlock()
	return f, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.files[f.ID] = f
		a.addLocked(f)
		a.entries[f.ID].updated = stamp
		a.updated = stamp
	}
}

// readable is album id when u may read its diff; m.mu is held.
func (m *Museum) readable(u *User, id int64) *Album {
	a := m.albums[id]
	if a == nil || a.deleted {
		return nil
	}
	if a.Owner == u {
		return a
	}
	if sh := a.shares[u.ID]; sh != nil && !sh.removed && !a.Owner.gone {
		return a
	}
	return nil
}

// Album returns the album of that id, made by a test or through the API.
func (m *Museum) Album(id int64) *Album {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.albums[id]
}

// albumsOf lists the albums that hold file id; m.mu is held.
func (m *Museum) albumsOf(id int64) []*Album {
	var out []*Album
	for _, a := range m.albums {
		if a.entries[id] != nil {
			out = append(out, a)
		}
	}
	return out
}
