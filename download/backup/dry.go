package backup

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/download/folder"
)

// dryDisk is a dry run's disk (Options.DryRun): it writes nothing in DIR
// but notes each change in an overlay, so that later decisions in the run
// see it as done. With it, a dry run decides everything a real one would.
type dryDisk struct {
	mu      sync.Mutex
	files   map[string]bool   // path → exists after this run's changes
	aliases map[string]string // a renamed folder's new path → its real one
}

func newDryDisk() *dryDisk {
	return &dryDisk{files: map[string]bool{}, aliases: map[string]string{}}
}

func (d *dryDisk) note(path string, exists bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.files[path] = exists
}

func (d *dryDisk) exists(path string) bool {
	d.mu.Lock()
	v, ok := d.files[path]
	if !ok {
		for alias, real := range d.aliases {
			if rest, found := strings.CutPrefix(path, alias+string(filepath.Separator)); found {
				path = filepath.Join(real, rest)
			}
		}
		v, ok = d.files[path]
	}
	d.mu.Unlock()
	if ok {
		return v
	}
	_, err := os.Lstat(path)
	return err == nil
}

func (d *dryDisk) rename(from, to string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aliases[to] = from
	d.files[to] = true
	d.files[from] = false
	return nil
}

func (d *dryDisk) writeFile(path string, _ []byte) error { d.note(path, true); return nil }

func (d *dryDisk) linkOrCopy(_, dst string) (bool, error) { d.note(dst, true); return false, nil }

func (d *dryDisk) remove(path string) { d.note(path, false) }

func (d *dryDisk) toTrash(from, _ string) (string, error) { d.note(from, false); return "", nil }

func (*dryDisk) mkdirAll(string, os.FileMode) error { return nil }
func (*dryDisk) chtimes(string, time.Time) error    { return nil }
func (*dryDisk) changed(...string)                  {}
func (*dryDisk) removeDir(string) bool              { return false }
func (*dryDisk) holds(string, string) bool          { return false } // a dry run reads no content
func (*dryDisk) saveViews(folder.ViewOptions) error { return nil }
func (*dryDisk) sync() error                        { return nil }
