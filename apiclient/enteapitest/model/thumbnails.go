package model

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
)

// Thumbnails and their repair, as museum keeps them (PUT /files/thumbnail,
// GET /files/large-thumbnails).

// ThumbnailHeader is the file's current thumbnail decryption header.
func (f *File) ThumbnailHeader() []byte {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return bytes.Clone(f.thumb.header)
}

// Thumbnail returns the encrypted thumbnail object as the store holds it
// now, and false when there is no row or its bytes are gone.
func (f *File) Thumbnail() ([]byte, bool) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	o := f.m.store.objects[f.thumb.object]
	if f.thumb.object == "" || o == nil || o.lost {
		return nil, false
	}
	return bytes.Clone(o.data), true
}

// LoseThumbnail deletes the thumbnail's bytes from the store, keeping its
// row and recorded size: what Ente's users see as a grey tile.
func (f *File) LoseThumbnail() {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if o := f.m.store.objects[f.thumb.object]; o != nil {
		lost := *o
		lost.lost = true
		f.m.store.objects[f.thumb.object] = &lost
	}
}

// BreakThumbnailHeader makes the file's thumbnail decryption header
// malformed (too short): a bad record, not damaged bytes.
func (f *File) BreakThumbnailHeader() {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	f.thumb.header = f.thumb.header[:10]
}

// RecordThumbnailSize sets the thumbnail's size in museum's object_keys row
// to n, as an earlier replacement would have left it, without touching
// files.info's thumbSize (museum never does).
func (f *File) RecordThumbnailSize(n int64) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	f.thumb.recorded = n
}

// RecordedThumbnailSize is object_keys.size of the thumbnail (0 without a
// row), and InfoThumbnailSize files.info's thumbSize.
func (f *File) RecordedThumbnailSize() int64 {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.thumb.recorded
}

// InfoThumbnailSize is files.info's thumbSize: the size at upload.
func (f *File) InfoThumbnailSize() int64 {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.thumb.info
}

// LargeThumbnails answers GET /files/large-thumbnails?threshold=N: u's
// files whose thumbnail object, as object_keys records it, is at least N
// bytes (repo.GetLargeThumbnailFiles), by id.
func (m *Museum) LargeThumbnails(u *User, threshold int64) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := []int64{}
	for id, f := range m.files {
		if f.Owner == u && f.thumb.object != "" && f.thumb.recorded >= threshold {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// wedge is what museum's database holds after an exact repeat of PUT
// /files/thumbnail: repo.FileRepository.UpdateThumbnail returns on the
// duplicate object_copies insert without rolling back, and the request's
// context never ends (gin's Context.Done is nil without ContextWithFallback),
// so the transaction stays open with row locks on the file, its albums and
// the user's usage row until museum restarts. Writes that need those rows
// hang; reads do not (Postgres readers never wait on row locks).
type wedge struct {
	users, files, albums map[int64]bool
	release              chan struct{}
}

// blocked reports whether a thumbnail commit by u for file id needs rows
// the wedge holds; m.mu is held.
func (w *wedge) blocked(m *Museum, u *User, id int64) bool {
	if w == nil {
		return false
	}
	if w.users[u.ID] || w.files[id] {
		return true
	}
	for _, a := range m.albumsOf(id) {
		if w.albums[a.ID] {
			return true
		}
	}
	return false
}

// Restart ends a wedge as restarting museum would: its transaction rolls
// back and every write waiting on it goes ahead.
func (m *Museum) Restart() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wedged != nil {
		close(m.wedged.release)
		m.wedged = nil
	}
}

// UpdateThumbnail answers PUT /files/thumbnail as museum does
// (FileController.UpdateThumbnail and repo.FileRepository.UpdateThumbnail,
// a621d73): the key must be u's (400), the file must exist (404), be u's
// (403) and have a thumbnail row (404); the new object must be in the
// store (500) and no larger than the existing thumbnail object as
// object_keys records it (500). Success records the new object's size in
// object_keys, not in files.info (whose thumbSize keeps the upload's
// size), bumps the file everywhere and deletes the old object. An exact
// repeat (a key already committed) answers 500 and wedges museum: later
// thumbnail commits by the same user, for the same file or for a file in
// one of its albums hang until Restart or until ctx ends (then it returns
// ctx's error).
func (m *Museum) UpdateThumbnail(ctx context.Context, u *User, fileID int64, key string, header []byte) error {
	if err := m.lockUnwedged(ctx, u, fileID); err != nil {
		return err
	}
	defer m.mu.Unlock()
	f := m.files[fileID]
	switch {
	case !strings.HasPrefix(key, fmt.Sprintf("%d/", u.ID)):
		return refuse(BadRequest, "BAD_REQUEST", "object key does not belong to the user")
	case f == nil:
		return plain(NotFound)
	case f.Owner != u:
		return plain(Forbidden)
	case f.thumb.object == "":
		return plain(NotFound)
	case m.store.objects[key] == nil:
		return plain(Internal) // HEAD on the object fails
	case m.store.objects[key].size > f.thumb.recorded:
		return plain(Internal) // new thumbnail larger than existing thumbnail
	case m.store.copied[key]:
		// The duplicate object_copies insert: 500, transaction left open.
		m.cfg.Event("EXACT REPEAT PUT /files/thumbnail")
		m.wedge(u, f)
		return plain(Internal)
	}
	m.store.copied[key] = true
	if key != f.thumb.object {
		delete(m.store.objects, f.thumb.object)
	}
	f.thumb.object = key
	f.thumb.recorded = m.store.objects[key].size
	f.thumb.header = bytes.Clone(header)
	f.touch()
	return nil
}

// lockUnwedged takes m.mu once no wedged transaction holds u's file
// fileID (a request waiting for one hangs, as museum's does, until the
// wedge is released or ctx ends). It returns ctx's error, without the
// lock, when ctx ended first.
func (m *Museum) lockUnwedged(ctx context.Context, u *User, fileID int64) error {
	m.mu.Lock()
	for m.wedged.blocked(m, u, fileID) {
		release := m.wedged.release
		m.mu.Unlock()
		m.cfg.Event("HUNG PUT /files/thumbnail")
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		m.mu.Lock()
	}
	return nil
}

// wedge leaves a transaction open on f, as museum's failed duplicate
// insert does: writes that need the rows of u's usage, f or f's albums
// hang; m.mu is held.
func (m *Museum) wedge(u *User, f *File) {
	if m.wedged == nil {
		m.wedged = &wedge{users: map[int64]bool{}, files: map[int64]bool{}, albums: map[int64]bool{}, release: make(chan struct{})}
	}
	m.wedged.users[u.ID] = true
	m.wedged.files[f.ID] = true
	for _, a := range m.albumsOf(f.ID) {
		m.wedged.albums[a.ID] = true
	}
}
