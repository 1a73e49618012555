package enteapitest

// TrashWithFiles deletes the album as Ente's apps do when its photos go
// with it (museum's DELETE /collections/v3 with keepFiles=false): the
// album lists as a tombstone, every file of its owner in it goes to the
// trash (out of every album, as a file trashed by itself does: museum
// trashes by file, not by album copy), and the files others added leave
// it. A trashed file cannot be added to an album again (409
// FILE_IN_TRASH) until it is restored from the trash.
func (a *Album) TrashWithFiles() {
	s := a.s
	s.mu.Lock()
	var own []*File
	now := s.now()
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
	s.mu.Unlock()
	for _, f := range own {
		f.Trash()
	}
}

// Trashed reports whether the file is in its owner's trash.
func (f *File) Trashed() bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.trashed
}

// Albums are the albums that hold the file live.
func (f *File) Albums() []*Album {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	var out []*Album
	for _, a := range f.s.collections {
		if e := a.entries[f.ID]; e != nil && !e.deleted && !a.deleted {
			out = append(out, a)
		}
	}
	return out
}
