package folder

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// nestDepth is how deep below DIR a first run looks for other backups.
const nestDepth = 3

// NestedError reports a first backup into a folder inside another backup
// (an album folder, say), or above other backups (the folder that holds
// a family's): almost always a mistake that would download everything a
// second time beside or inside what is there.
type NestedError struct {
	Dir    string   // as the user gave it
	Inside string   // the backup DIR is inside, or ""
	Holds  []string // the backups under DIR
}

func (e *NestedError) Error() string {
	if e.Inside != "" {
		return fmt.Sprintf("backup folder %s is inside the backup %s", e.Dir, e.Inside)
	}
	return fmt.Sprintf("backup folder %s holds other backups (%s)", e.Dir, strings.Join(e.Holds, ", "))
}

// CheckNested refuses, with a *NestedError, a folder that holds no backup
// yet but is inside one, or holds one up to three folders down. A folder
// that is a backup already is what it is: it is not checked.
func (f *Folder) CheckNested() error {
	if f.HasState() {
		return nil
	}
	for p := filepath.Dir(f.Dir); ; p = filepath.Dir(p) {
		if At(p).HasState() {
			return &NestedError{Dir: f.Shown, Inside: p}
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	var holds []string
	walkDirs(f.Dir, nestDepth, func(p string) bool {
		if At(p).HasState() {
			holds = append(holds, p)
		}
		return true
	})
	if len(holds) > 0 {
		sort.Strings(holds)
		return &NestedError{Dir: f.Shown, Holds: holds}
	}
	return nil
}

// Below lists the folders under dir, up to three levels down, that is
// says are what a person looks for (a backup, an export), in order; not
// those inside one found, which are parts of it.
func Below(dir string, is func(string) bool) []string {
	var found []string
	walkDirs(dir, nestDepth, func(p string) bool {
		if is(p) {
			found = append(found, p)
			return false
		}
		return true
	})
	sort.Strings(found)
	return found
}

// walkDirs calls fn for each folder under root, depth levels down at
// most, never through a symbolic link nor into a hidden folder, and
// looks inside a folder only when fn says so.
func walkDirs(root string, depth int, fn func(string) bool) {
	if depth == 0 {
		return
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(root, e.Name())
		if fn(p) {
			walkDirs(p, depth-1, fn)
		}
	}
}
