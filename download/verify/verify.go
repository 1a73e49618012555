// Package verify re-reads a backup folder and checks every saved file
// against the BLAKE2b-512 hash recorded when it was written (Ente's own
// content hash): missing files, changed bytes (bit rot, edits), files in
// album folders that quak did not put there, and album copies whose hard
// link to the others was broken.
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
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
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
// while a backup runs) and records when each file was checked.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	if o.Now == nil {
		o.Now = time.Now
	}
	sum := &Summary{Problems: map[Kind]int{}}
	defer func() { sum.Duration = time.Since(start) }()
	f := folder.At(o.Dir)
	if _, err := os.Stat(f.StateFile()); err != nil {
		return sum, &folder.DirError{Dir: o.Dir, Reason: "holds no quak backup (no " + f.StateFileShown() + ")", Err: err}
	}
	unlock, err := f.Lock()
	if err != nil {
		return sum, err
	}
	defer unlock()
	st, err := f.OpenState()
	if err != nil {
		return sum, err
	}
	defer func() { _ = st.Close() }()
	v := &verifier{o: o, dir: f.Dir, st: st, sum: sum, hashed: map[fileKey]string{}}
	return sum, v.run(ctx)
}

type verifier struct {
	o      Options
	dir    string
	st     *state.Store
	sum    *Summary
	colls  map[int64]*state.Collection
	hashed map[fileKey]string // hash of each inode read, so links are read once
	buf    []byte             // the one read buffer
}

func (v *verifier) report(p Problem) {
	v.sum.Problems[p.Kind]++
	if v.o.Events != nil {
		v.o.Events(p)
	}
}

func (v *verifier) run(ctx context.Context) error {
	var err error
	if v.colls, err = v.st.Collections(); err != nil {
		return err
	}
	var files []*state.File
	err = v.st.Files(func(f *state.File) error {
		if (f.Status == state.Saved || f.Status == state.HashMismatch) && len(f.Entries) > 0 {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	v.sum.Total = len(files)
	if err := v.extras(files); err != nil {
		return err
	}
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
	n := len(files)
	if v.o.Sample > 0 && v.o.Sample < 100 {
		n = min(n, int(math.Ceil(float64(len(files))*v.o.Sample/100)))
	}
	var done []int64
	flush := func() error {
		err := v.st.SetVerified(done, v.o.Now())
		done = done[:0]
		return err
	}
	for _, f := range files[:n] {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, flush())
		}
		bad, err := v.file(f)
		if err != nil {
			return errors.Join(err, flush())
		}
		if bad {
			v.sum.Redownload = append(v.sum.Redownload, f.ID)
		}
		v.sum.Checked++
		done = append(done, f.ID)
		if len(done) >= 500 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// partHashes are the hashes f's parts were written with.
func partHashes(f *state.File) []string { return catalog.PartHashes(f) }

// file checks every album copy of f and reports whether it needs to be
// downloaded again. Only errors that stop the run are returned.
func (v *verifier) file(f *state.File) (bad bool, err error) {
	want := partHashes(f)
	cids := make([]int64, 0, len(f.Entries))
	for cid := range f.Entries {
		cids = append(cids, cid)
	}
	sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
	if f.Status == state.HashMismatch {
		// Its bytes may be intact, but never matched what Ente says they are.
		p := ""
		if c := v.colls[cids[0]]; c != nil {
			for _, part := range f.Entries[cids[0]].Parts {
				p = filepath.Join(c.Folder, part)
				break // the first
			}
		}
		v.report(Problem{Kind: Mismatch, FileID: f.ID, Path: p,
			Detail: "its bytes do not match Ente's hash for it (what the uploader sent, or a damaged download)"})
		bad = true
	}
	var first []os.FileInfo // the first copy's parts, to compare links with
	for _, cid := range cids {
		e, c := f.Entries[cid], v.colls[cid]
		if c == nil {
			continue
		}
		var infos []os.FileInfo
		for i, part := range e.Parts {
			rel := filepath.Join(c.Folder, part)
			p, err := layout.Join(v.dir, c.Folder, part)
			if err != nil {
				continue
			}
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() {
				v.report(Problem{Kind: Missing, FileID: f.ID, Path: rel})
				bad = true
				infos = append(infos, nil)
				continue
			}
			infos = append(infos, fi)
			if i >= len(want) || want[i] == "" {
				continue // no hash on record: nothing to compare
			}
			got, err := v.hash(p, fi)
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return bad, err
				}
				v.report(Problem{Kind: Changed, FileID: f.ID, Path: rel, Detail: "unreadable: " + err.Error()})
				bad = true
				continue
			}
			if got != want[i] {
				v.report(Problem{Kind: Changed, FileID: f.ID, Path: rel, Detail: "its bytes no longer match the hash recorded at download"})
				bad = true
			}
		}
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
	return bad, nil
}

// hash reads the file at p once per inode, streaming through one buffer.
func (v *verifier) hash(p string, fi os.FileInfo) (string, error) {
	k, ok := keyOf(fi)
	if ok {
		if h, seen := v.hashed[k]; seen {
			return h, nil
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := keys.NewHash()
	if v.buf == nil {
		v.buf = make([]byte, 1<<20)
	}
	n, err := io.CopyBuffer(h, f, v.buf)
	v.sum.Bytes += n
	if err != nil {
		return "", err
	}
	sum := keys.EncodeB64(h.Sum(nil))
	if ok {
		v.hashed[k] = sum
	}
	return sum, nil
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
