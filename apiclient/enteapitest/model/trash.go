package model

// TrashWithFiles deletes the album as Ente's apps do when its photos go
// with it (museum's DELETE /collections/v3 with keepFiles=false): the
// album lists as a tombstone, every file of its owner in it goes to the
// trash (out of every album, as a file trashed by itself does: museum
// trashes by file, not by album copy), and the files others added leave
// it. A trashed file cannot be added to an album again (409
// FILE_IN_TRASH) until it is restored from the trash.
func (a *Album) TrashWithFiles() {
	m := a.m
	m.mu.Lock()
	var own []*File
	now := m.tick()
	for _, e := range a.entries {
		switch {
		case e.deleted:
		case e.file.Owner == a.Owner:
			own = append(own, e.file)
		default:
			e.deleted, e.updated = true, now
		}
	}
	a.deleted, a.updated = true, now
	m.mu.Unlock()
	for _, f := range own {
		f.Trash()
	}
}

// Trashed reports whether the file is in its owner's trash.
func (f *File) Trashed() bool {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.trashed
}

// Albums are the albums that hold the file live.
func (f *File) Albums() []*Album {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	var out []*Album
	for _, a := range f.m.albumsOf(f.ID) {
		if e := a.entries[f.ID]; !e.deleted && !a.deleted {
			out = append(out, a)
		}
	}
	return out
}
