package backup

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/download/state"
)

// Owner returns the account recorded in dir's state: the one account whose
// backup dir is, or nil when dir holds no backup yet. Errors: ErrLocked
// while a run holds the state, or why the state could not be read.
func Owner(dir string) (*state.Account, error) {
	st, err := state.OpenReadOnly(filepath.Join(dir, StateDir, "state.db"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, state.ErrBusy):
		return nil, ErrLocked
	case err != nil:
		return nil, err
	}
	defer func() { _ = st.Close() }()
	return st.Account()
}
