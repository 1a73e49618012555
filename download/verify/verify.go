package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// Kind is what is wrong.
type Kind string

// Problems verify reports.
const (
	Missing  Kind = "missing"  // a saved file is gone from its album folder
	Changed  Kind = "changed"  // its bytes no longer hash to what was written
	Extra    Kind = "extra"    // a file in an album folder that quak did not save
	Unlinked Kind = "unlinked" // an album copy is no longer a hard link to the others
	// Mismatch: a file kept although its bytes never matched Ente's hash
	// (what its uploader encrypted, or a damaged download).
	Mismatch Kind = "mismatch"
)

// Problem is one finding. Path is relative to the backup folder.
type Problem struct {
	Kind   Kind
	FileID int64 // 0 for Extra
	Path   string
	Detail string
}

// Options configure a run.
type Options struct {
	Dir string
	// Sample is the percentage of saved files to check, least recently
	// verified first (0 or 100: all). Extra files are looked for in every
	// album folder every time.
	Sample float64
	Now    func() time.Time // default time.Now
	// Events, if set, hears of each problem. Calls never overlap.
	Events func(Problem)
	// Ignore are more name globs (path.Match, case-insensitive) of files in
	// album folders that are never extra, besides DefaultIgnore.
	Ignore []string
	// Concurrency is how many files are read at once, each through a 1 MiB
	// buffer of its own; below 1, runtime.NumCPU(). What a run finds, and
	// the order Events hears of it, do not depend on it.
	Concurrency int

	// open opens a file to hash; os.Open when nil. Tests hold reads up.
	open func(name string) (io.ReadCloser, error)
}

// DefaultIgnore are the files operating systems and photo managers drop
// into folders, which verify never calls extra: Finder's and Windows
// Explorer's folder files, macOS's AppleDouble files, and XMP sidecars
// written by other tools (darktable, Lightroom, digiKam).
var DefaultIgnore = []string{".DS_Store", "Thumbs.db", "desktop.ini", "._*", "*.xmp"}

// ignored reports whether name matches one of the globs, ignoring case.
func ignored(name string, globs []string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(strings.ToLower(g), strings.ToLower(name)); ok {
			return true
		}
	}
	return false
}

// ValidIgnore reports a malformed glob.
func ValidIgnore(globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("--ignore %q: %w", g, err)
		}
	}
	return nil
}

// Summary is what a run checked and found.
type Summary struct {
	Total    int   // files the backup holds
	Checked  int   // files hashed this run
	Bytes    int64 // bytes read
	Problems map[Kind]int
	// Redownload lists the files to download again (missing or changed):
	// what quak backup --verify repairs.
	Redownload []int64
	// Unverified counts files never checked before this run's sample.
	Unverified int
	Duration   time.Duration
	// Unrecorded is why what was found could not be recorded for quak
	// status and the next backup, or nil (also when ReadOnly: nothing was
	// tried).
	Unrecorded error
	// ReadOnly: DIR could not be written (a snapshot, a read-only mount),
	// so neither when each file was checked nor what was found was
	// recorded.
	ReadOnly bool
}

// OK reports whether nothing was found.
func (s *Summary) OK() bool {
	for _, n := range s.Problems {
		if n > 0 {
			return false
		}
	}
	return true
}

// Run verifies the backup in o.Dir. It takes the folder's lock (ErrLocked
// while a backup runs), records when each file was checked and what it
// found (Summary.Unrecorded says why not, if it could not); a DIR that
// cannot be written (where no backup can run) is verified without the
// lock and records nothing, and Summary.ReadOnly says so.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency < 1 {
		o.Concurrency = runtime.NumCPU()
	}
	if o.open == nil {
		o.open = func(name string) (io.ReadCloser, error) { return os.Open(name) }
	}
	sum := &Summary{Problems: map[Kind]int{}}
	defer func() { sum.Duration = time.Since(start) }()
	f := folder.At(o.Dir)
	if _, err := os.Stat(f.StateFile()); err != nil {
		return sum, &folder.DirError{Dir: o.Dir, Reason: "holds no quak backup (no " + f.StateFileShown() + ")", Err: err}
	}
	open := f.OpenState
	if sum.ReadOnly = !f.Writable(); sum.ReadOnly {
		open = f.OpenStateReadOnly
	} else {
		unlock, err := f.LockFor("verify")
		if err != nil {
			return sum, err
		}
		defer unlock()
	}
	st, err := open()
	if err != nil {
		return sum, err
	}
	defer func() { _ = st.Close() }()
	v := &verifier{o: o, dir: f.Dir, st: st, sum: sum, inodes: &inodes{m: map[fileKey]*inode{}}, checked: map[int64]bool{}}
	if err := v.run(ctx); err != nil {
		return sum, err
	}
	if !sum.ReadOnly {
		sum.Unrecorded = v.record(f)
	}
	return sum, nil
}

// verifier is one run. Workers read colls, dir and inodes; only the
// goroutine that called Run touches sum and st, and reports.
type verifier struct {
	o      Options
	dir    string
	st     *state.Store
	sum    *Summary
	colls  map[int64]*state.Collection
	inodes *inodes
	// damaged are the files found missing or changed, checked those
	// hashed: what the folder's record of this verify keeps.
	damaged []folder.Damage
	checked map[int64]bool
}

func (v *verifier) report(p Problem) {
	v.sum.Problems[p.Kind]++
	v.noteDamage(p)
	if v.o.Events != nil {
		v.o.Events(p)
	}
}

func (v *verifier) run(ctx context.Context) error {
	var err error
	if v.colls, err = v.st.Collections(); err != nil {
		return err
	}
	files, err := v.saved()
	if err != nil {
		return err
	}
	v.sum.Total = len(files)
	if err := v.extras(files); err != nil {
		return err
	}
	if err := v.order(files); err != nil {
		return err
	}
	n := len(files)
	if v.o.Sample > 0 && v.o.Sample < 100 {
		n = min(n, int(math.Ceil(float64(len(files))*v.o.Sample/100)))
	}
	var done []int64
	flush := func() error {
		if len(done) == 0 || v.sum.ReadOnly {
			return nil
		}
		err := v.st.SetVerified(done, v.o.Now())
		done = done[:0]
		return err
	}
	err = v.inOrder(ctx, files[:n], func(l *look) error {
		v.sum.Bytes += l.bytes
		if v.judge(l) {
			v.sum.Redownload = append(v.sum.Redownload, l.f.ID)
		}
		v.sum.Checked++
		v.checked[l.f.ID] = true
		done = append(done, l.f.ID)
		if len(done) >= 500 {
			return flush()
		}
		return nil
	})
	return errors.Join(err, flush())
}

// saved lists the files the backup holds copies of.
func (v *verifier) saved() ([]*state.File, error) {
	var files []*state.File
	err := v.st.Files(func(f *state.File) error {
		if (f.Status == state.Saved || f.Status == state.HashMismatch) && len(f.Entries) > 0 {
			files = append(files, f)
		}
		return nil
	})
	return files, err
}

// order sorts files least recently verified first (never verified ones
// before all others), so a sample checks what waited longest, and counts
// the never verified.
func (v *verifier) order(files []*state.File) error {
	when, err := v.st.Verified()
	if err != nil {
		return err
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := when[files[i].ID], when[files[j].ID]
		if !a.Equal(b) {
			return a.Before(b) // never verified (zero time) first
		}
		return files[i].ID < files[j].ID
	})
	for _, f := range files {
		if when[f.ID].IsZero() {
			v.sum.Unverified++
		}
	}
	return nil
}

// partHashes are the hashes f's parts were written with.
func partHashes(f *state.File) []string { return state.PartHashes(f) }

// judge reports what l found wrong with its file, in the order of its
// albums and parts, and whether it needs to be downloaded again.
func (v *verifier) judge(l *look) (bad bool) {
	f, cids := l.f, l.cids
	if f.Status == state.HashMismatch {
		v.mismatch(f, cids[0])
		bad = true
	}
	want := partHashes(f)
	var first []os.FileInfo // the first copy's parts, to compare links with
	for ci, cid := range cids {
		e, c := f.Entries[cid], v.colls[cid]
		if c == nil {
			continue
		}
		infos, damaged := v.copyOf(f, c, e, l.parts[ci], want)
		bad = bad || damaged
		if first == nil {
			first = infos
			continue
		}
		if e.Copy {
			continue
		}
		for i, fi := range infos {
			if fi != nil && i < len(first) && first[i] != nil && !os.SameFile(fi, first[i]) {
				v.report(Problem{Kind: Unlinked, FileID: f.ID, Path: filepath.Join(c.Folder, e.Parts[i]),
					Detail: "no longer a hard link to the file's other album copies (it takes space twice)"})
			}
		}
	}
	return bad
}

// mismatch reports a file whose bytes never matched Ente's hash, at its
// first part in album cid.
func (v *verifier) mismatch(f *state.File, cid int64) {
	// Its bytes may be intact, but never matched what Ente says they are.
	p := ""
	if c := v.colls[cid]; c != nil && len(f.Entries[cid].Parts) > 0 {
		p = filepath.Join(c.Folder, f.Entries[cid].Parts[0])
	}
	v.report(Problem{Kind: Mismatch, FileID: f.ID, Path: p,
		Detail: "its bytes do not match Ente's hash for it (what the uploader sent, or a damaged download)"})
}

// copyOf checks one album's copy of f part by part against the hashes
// want, reporting what is missing or changed. It returns the parts' file
// infos (nil for a missing one, none for a skipped one) and whether any
// part was damaged.
func (v *verifier) copyOf(f *state.File, c *state.Collection, e *state.Entry, parts []partLook, want []string) (infos []os.FileInfo, bad bool) {
	for i, pl := range parts {
		if pl.skip {
			continue
		}
		rel := filepath.Join(c.Folder, e.Parts[i])
		if pl.fi == nil {
			v.report(Problem{Kind: Missing, FileID: f.ID, Path: rel})
			infos = append(infos, nil)
			bad = true
			continue
		}
		infos = append(infos, pl.fi)
		switch {
		case !pl.hashed:
			// no hash on record: nothing to compare
		case pl.err != nil:
			v.report(Problem{Kind: Changed, FileID: f.ID, Path: rel, Detail: "unreadable: " + pl.err.Error()})
			bad = true
		case pl.sum != want[i]:
			v.report(Problem{Kind: Changed, FileID: f.ID, Path: rel, Detail: "its bytes no longer match the hash recorded at download"})
			bad = true
		}
	}
	return infos, bad
}

// extras reports files in album folders that no saved entry names.
func (v *verifier) extras(files []*state.File) error {
	known := map[int64]map[string]bool{}
	for _, f := range files {
		for cid, e := range f.Entries {
			if known[cid] == nil {
				known[cid] = map[string]bool{}
			}
			for _, p := range e.Parts {
				known[cid][p] = true
			}
		}
	}
	// Failed files may have parts from an earlier save; never call those extra.
	err := v.st.Files(func(f *state.File) error {
		for cid, e := range f.Entries {
			if known[cid] == nil {
				known[cid] = map[string]bool{}
			}
			for _, p := range e.Parts {
				known[cid][p] = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(v.colls))
	for id := range v.colls {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		c := v.colls[id]
		p, err := layout.Join(v.dir, c.Folder)
		if err != nil {
			continue
		}
		entries, err := os.ReadDir(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading album folder %s: %w", c.Folder, err)
		}
		for _, de := range entries {
			name := de.Name()
			if name == ".meta" || known[id][name] || sidecars.IsOwn(name, known[id]) || ignored(name, DefaultIgnore) || ignored(name, v.o.Ignore) {
				continue
			}
			v.report(Problem{Kind: Extra, Path: filepath.Join(c.Folder, name), Detail: "not a file quak saved"})
		}
	}
	return nil
}
