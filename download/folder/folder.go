package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/state"
)

// StateDir is the folder under DIR where quak keeps its state and lock. No
// album folder takes this name.
const StateDir = ".quak"

// The files and folders in StateDir.
const (
	stateFile   = "state.db"
	lockFile    = "lock"
	tempDir     = "tmp"
	trashDir    = "trash"
	optionsFile = "options.json"
	lastRun     = "last-run.json"
	lastSuccess = "last-success.json"
	lastRefused = "last-refused.json"
)

// ErrLocked reports that another quak run holds the folder's lock.
var ErrLocked = errors.New("another quak run is backing up this folder")

// DirError reports a backup folder quak cannot use.
type DirError struct {
	Dir    string
	Reason string
	Err    error
	Kind   DirKind // what cmd's hint is about, when it has one
}

// DirKind says what is wrong with a backup folder, so that cmd can say
// what to do about it.
type DirKind int

// Kinds of DirError with advice of their own.
const (
	DirOther   DirKind = iota
	DirMissing         // DIR does not exist
	DirNoSpace         // what is new does not fit
	DirLink            // a folder of quak's is a symbolic link
)

func (e *DirError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("backup folder %s %s: %v", e.Dir, e.Reason, e.Err)
	}
	return fmt.Sprintf("backup folder %s %s", e.Dir, e.Reason)
}

func (e *DirError) Unwrap() error { return e.Err }

// Folder is a backup folder: Dir is its absolute path, Shown the path as
// the user gave it, for messages.
type Folder struct {
	Dir   string
	Shown string
}

// At is the folder dir, which need not exist. Dir is absolute unless the
// working directory cannot be found, when it is dir as given.
func At(dir string) *Folder {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return &Folder{Dir: abs, Shown: dir}
}

func (f *Folder) path(parts ...string) string {
	return filepath.Join(append([]string{f.Dir, StateDir}, parts...)...)
}

// StateDir is DIR/.quak.
func (f *Folder) StateDir() string { return f.path() }

// Temp, DIR/.quak/tmp, holds every file quak is still writing: on the same
// file system as the album folders, so each final rename is atomic, and
// away from them, so a photo manager never sees a half-written file.
func (f *Folder) Temp() string { return f.path(tempDir) }

// Trash, DIR/.quak/trash, is where pruned files wait.
func (f *Folder) Trash() string { return f.path(trashDir) }

// HasBackup reports whether DIR holds quak's folder (a backup, or a run
// that started one).
func (f *Folder) HasBackup() bool {
	fi, err := os.Stat(f.path())
	return err == nil && fi.IsDir()
}

// MakeRestoreArea creates DIR/.quak and its temp area in a folder that is
// not a backup (an Ente export being restored): room for the lock, the
// restore journal and the temp files, and nothing else.
func (f *Folder) MakeRestoreArea() error { return os.MkdirAll(f.Temp(), 0o700) }

// StateFile is the state database's path, for tools and tests that look
// at the file itself.
func (f *Folder) StateFile() string { return f.path(stateFile) }

// LastRunPath is where the record of the last run lives.
func (f *Folder) LastRunPath() string { return f.path(lastRun) }

// LastSuccessPath is where the record of the last full success lives.
func (f *Folder) LastSuccessPath() string { return f.path(lastSuccess) }

// LastVerifyPath is where the record of what verify found lives.
func (f *Folder) LastVerifyPath() string { return f.path(lastVerify) }

// RefusalPath is where the record of the last refused run lives.
func (f *Folder) RefusalPath() string { return f.path(lastRefused) }

// ViewOptionsPath is where the remembered views live.
func (f *Folder) ViewOptionsPath() string { return f.path(optionsFile) }

// StateFileShown is the state database's path within DIR, for messages.
func (f *Folder) StateFileShown() string { return filepath.Join(StateDir, stateFile) }

// HasState reports whether DIR holds a state database.
func (f *Folder) HasState() bool {
	_, err := os.Stat(f.path(stateFile))
	return err == nil
}

// Lock takes DIR's lock, held by one quak run at a time (backup, verify,
// the thumbnail helper), or fails with a *LockedError (errors.Is
// ErrLocked). DIR/.quak must exist.
func (f *Folder) Lock() (unlock func(), err error) { return f.LockFor("") }

// LockFor is Lock for command ("backup", "verify"…), which a run refused
// the lock meanwhile is told, with this process's id and the time.
func (f *Folder) LockFor(command string) (unlock func(), err error) {
	note, err := json.Marshal(Holder{Command: command, PID: os.Getpid(), Since: Seconds(time.Now())})
	if err != nil {
		return nil, err
	}
	unlock, err = durable.TryLockAs(f.path(lockFile), note)
	if errors.Is(err, durable.ErrHeld) {
		return nil, &LockedError{Holder: f.holder()}
	}
	return unlock, err
}

// Holder is who holds a folder's lock, as its lock file says.
type Holder struct {
	Command string    `json:"command"` // "" when the holder did not say
	PID     int       `json:"pid"`
	Since   time.Time `json:"since"`
}

// LockedError is a lock another quak run holds; Holder says who, nil
// when its lock file does not say (a quak from before it did, or a run
// that took the lock this very moment).
type LockedError struct{ Holder *Holder }

func (e *LockedError) Error() string {
	h := e.Holder
	if h == nil {
		return ErrLocked.Error()
	}
	who := "quak " + h.Command
	if h.Command == "" {
		who = "a quak run"
	}
	return fmt.Sprintf("another quak run holds this folder: %s, process %d, since %s", who, h.PID, h.Since.Local().Format(time.RFC3339))
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// holder reads who holds the lock, or nil.
func (f *Folder) holder() *Holder {
	b, err := durable.ReadNote(f.path(lockFile))
	var h Holder
	if err != nil || json.Unmarshal(b, &h) != nil || h.PID <= 0 {
		return nil
	}
	return &h
}

// OpenState opens the state database for a run that holds the lock.
// Errors: ErrLocked while another process reads it (the thumbnail
// helper's --from).
func (f *Folder) OpenState() (*state.Store, error) {
	st, err := state.Open(f.path(stateFile))
	if errors.Is(err, state.ErrBusy) {
		return nil, ErrLocked
	}
	return st, err
}

// OpenStateReadOnly opens the state database to read it beside no writer:
// os.ErrNotExist when there is none, ErrLocked while a run writes it.
func (f *Folder) OpenStateReadOnly() (*state.Store, error) {
	st, err := state.OpenReadOnly(f.path(stateFile))
	if errors.Is(err, state.ErrBusy) {
		return nil, ErrLocked
	}
	return st, err
}

// Owner returns the account recorded in the state: the one account whose
// backup DIR is, or nil when it holds no backup yet. Errors: ErrLocked
// while a run holds the state, or why the state could not be read.
func (f *Folder) Owner() (*state.Account, error) {
	st, err := f.OpenStateReadOnly()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	defer func() { _ = st.Close() }()
	return st.Account()
}
