package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
)

// moveNoReplace moves from to to, or to "to (2)", "to (3)"… when that
// name is taken: a hard link, which fails rather than replace, then the
// old name removed; where the file system has no hard links, a rename to
// a name checked free.
func moveNoReplace(from, to string) (string, error) {
	for n := 1; ; n++ {
		cand := numbered(to, n)
		err := hardLink(from, cand)
		switch {
		case err == nil:
			return cand, os.Remove(from)
		case errors.Is(err, os.ErrExist):
			continue
		}
		if _, err := os.Lstat(cand); err == nil {
			continue
		}
		return cand, os.Rename(from, cand)
	}
}

// numbered is path with " (n)" before its extension (n > 1), its name cut
// (at a whole UTF-8 character) so that it still fits layout.MaxName.
func numbered(path string, n int) string {
	if n <= 1 {
		return path
	}
	dir, name := filepath.Split(path)
	ext := filepath.Ext(name)
	if len(ext) > 16 {
		ext = ""
	}
	stem := strings.TrimSuffix(name, ext)
	suffix := fmt.Sprintf(" (%d)", n)
	cut := layout.MaxName - len(suffix) - len(ext)
	if len(stem) > cut {
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		stem = stem[:cut]
	}
	return dir + stem + suffix + ext
}

// TrashDay is one day of DIR's trash: its name (YYYY-MM-DD), and the files
// in it (paths relative to the day's folder) with their total size.
type TrashDay struct {
	Name  string
	Files []string
	Bytes int64
}

// EmptyTrash deletes the days of DIR's trash from before cutoff and
// returns them. It takes DIR's lock. With dry, it deletes nothing, takes
// no lock, and returns what it would delete.
func EmptyTrash(dir string, cutoff time.Time, dry bool) ([]TrashDay, error) {
	f := folder.At(dir)
	if _, err := os.Stat(f.StateDir()); err != nil {
		return nil, &DirError{Dir: dir, Reason: "holds no quak backup", Err: err}
	}
	if err := f.CheckLinks(); err != nil {
		return nil, err
	}
	if !dry {
		unlock, err := f.LockFor("prune-trash")
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	root := f.Trash()
	days, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []TrashDay
	for _, d := range days {
		day, err := time.Parse("2006-01-02", d.Name())
		// A day goes once all of it is older than cutoff.
		if err != nil || !d.IsDir() || day.AddDate(0, 0, 1).After(cutoff) {
			continue
		}
		td, err := trashDay(root, d.Name())
		if err != nil {
			return out, err
		}
		if !dry {
			if err := os.RemoveAll(filepath.Join(root, d.Name())); err != nil {
				return out, err
			}
		}
		out = append(out, td)
	}
	return out, nil
}

// trashDay lists the files of a day of the trash.
func trashDay(root, name string) (TrashDay, error) {
	td := TrashDay{Name: name}
	base := filepath.Join(root, name)
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		if fi, err := d.Info(); err == nil {
			td.Bytes += fi.Size()
		}
		td.Files = append(td.Files, rel)
		return nil
	})
	return td, err
}
