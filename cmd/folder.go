package cmd

import (
	"errors"
	"os"

	"github.com/quak-photos/quak/download/folder"
)

// needFolder refuses a backup folder that is not there, before anything is
// asked about accounts: a disk that did not mount, or a typo, is what the
// user must hear about first.
func needFolder(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &folder.DirError{Dir: dir, Reason: "does not exist", Kind: folder.DirMissing}
	case err != nil:
		return &folder.DirError{Dir: dir, Reason: "cannot be read", Err: err}
	case !fi.IsDir():
		return &folder.DirError{Dir: dir, Reason: "is not a folder"}
	}
	return nil
}
