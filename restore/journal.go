package restore

import (
	"errors"
	"os"

	"github.com/quak-photos/quak/download/folder"
)

// Why a restore keeps its journal outside the folder it restores.
const (
	JournalAsked    = "asked"     // --journal
	JournalFound    = "found"     // an earlier restore of this source into this account kept it there
	JournalReadOnly = "read-only" // the folder cannot be written
)

// placeJournal decides where the journal is kept, writing nothing: in
// DIR/.quak, unless it is asked elsewhere, was kept in the store by an
// earlier run of this source into this account, or DIR cannot be written.
func (r *run) placeJournal() error {
	t := r.o.Target
	store := folder.JournalStore{Root: r.o.Journals}
	switch {
	case r.o.JournalsAlways:
		r.store, r.storeWhy = &store, JournalAsked
	case !r.f.Writable() && r.o.Journals == "":
		if !r.o.DryRun {
			return &folder.DirError{Dir: r.f.Shown, Reason: "cannot be written, and no other folder was given for the restore's journal"}
		}
		r.storeWhy = JournalReadOnly // a dry run keeps none
	case !r.f.Writable():
		r.store, r.storeWhy = &store, JournalReadOnly
	case r.o.Journals != "":
		j, err := store.Existing(r.src.id(), t.Endpoint, t.Keys.UserID)
		if err != nil {
			return err
		}
		if j != nil {
			r.store, r.storeWhy = &store, JournalFound
		}
	}
	return nil
}

// existingJournal is the journal placeJournal chose, if it exists yet.
func (r *run) existingJournal() (*folder.Journal, error) {
	t := r.o.Target
	if r.store != nil {
		return r.store.Existing(r.src.id(), t.Endpoint, t.Keys.UserID)
	}
	return r.f.ExistingJournal(t.Endpoint, t.Keys.UserID)
}

// openJournal opens (making it) the journal placeJournal chose, and takes
// the locks that keep other runs out: DIR's while DIR can be written (a
// backup must not change it under the restore), the journal's own when
// it is kept outside DIR (two copies of one backup, restored at once into
// one account, share it). It notes whether earlier runs left records
// (resuming), and picks the temp area. A journal kept outside DIR takes
// in the records of one DIR already holds. unlock lets everything go.
func (r *run) openJournal() (_ func(), err error) {
	var unlocks []func()
	unlock := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	if r.store == nil || r.f.Writable() {
		if err := r.f.MakeRestoreArea(); err != nil {
			return nil, err
		}
		u, err := r.f.LockFor("restore")
		if err != nil {
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	t := r.o.Target
	if r.store == nil {
		if r.j, err = r.f.Journal(t.Endpoint, t.Keys.UserID); err != nil {
			return nil, err
		}
		r.tmp = r.f.Temp()
		return unlock, r.noteResuming()
	}
	if r.j, err = r.store.Open(r.src.id(), t.Endpoint, t.Keys.UserID); err != nil {
		return nil, err
	}
	u, err := r.j.Lock()
	if err != nil {
		return nil, err
	}
	unlocks = append(unlocks, u)
	if err := r.noteResuming(); err != nil {
		return nil, err
	}
	if old, err := r.f.ExistingJournal(t.Endpoint, t.Keys.UserID); err != nil {
		return nil, err
	} else if old != nil {
		if err := r.j.SeedFrom(old); err != nil {
			return nil, err
		}
		r.resuming = true
	}
	if r.tmp, err = r.j.Temp(); err != nil {
		return nil, err
	}
	return unlock, cleanTemp(r.tmp)
}

// noteResuming records whether the journal holds what earlier runs sent.
func (r *run) noteResuming() error {
	empty, err := r.j.Empty()
	r.resuming = !empty
	return err
}

// cleanTemp removes what a run killed left in a journal's temp folder,
// which only a run holding the journal's lock uses.
func cleanTemp(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(dir+string(os.PathSeparator)+e.Name()))
	}
	return errors.Join(errs...)
}
