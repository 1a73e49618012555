package takeout

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// kind is how a part of a Takeout is stored.
type kind int

const (
	kindZip kind = iota + 1 // a takeout-*.zip, read through its central directory
	kindTar                 // a takeout-*.tgz, read as a stream, twice
	kindDir                 // a folder a part was unpacked into
)

func (k kind) String() string {
	switch k {
	case kindZip:
		return "zip"
	case kindTar:
		return "tgz"
	}
	return "folder"
}

// partFile is a part's file as quak reads it (an *os.File; tests count
// the bytes read through it).
type partFile interface {
	io.Reader
	io.ReaderAt
	io.Closer
	Stat() (os.FileInfo, error)
}

func openFile(name string) (partFile, error) { return os.Open(name) }

// part is one PATH of the import: a zip, a tgz or a folder.
type part struct {
	path    string // as given
	index   int    // its place among the paths given
	kind    kind
	size    int64 // the archive's bytes (0 for a folder)
	entries []*entry
	report  *PartReport
	open    func(string) (partFile, error)
	loc     *time.Location // the zone of dates without one
	zip     *zipPart
	// damaged is why the part could not be read to its end: entries read
	// before the damage are used, the others are not.
	damaged error
}

// entry is one file of a part.
type entry struct {
	p    *part
	name string // its name in the part, as stored
	dir  string // its folder in the Takeout (an album's or a year's), across parts
	base string
	size int64
	crc  uint32 // CRC-32 (IEEE) of its bytes: a zip's directory says, a tgz's first pass counts
	// hasCRC: crc is known.
	hasCRC bool
	mod    int64  // its modification time (µs)
	hash   string // Ente's hash of its bytes (BLAKE2b-512, base64): known for a tgz's entries after the first pass
	date   *fileDate
	pos    int    // its place in its part, in archive order
	file   string // a folder part's file on disk
	zipAt  int    // a zip part's index of the entry in its directory
	// counted is what the report counted the entry as (a rule, or a
	// note's kind), so that a skip can take it back.
	counted string
}

// where names an entry for a person: its part and its name there.
func (e *entry) where() string { return e.p.path + ": " + e.name }

// PartError is a PATH of an import that cannot be read: missing, or no
// Takeout part.
type PartError struct {
	Path string
	Err  error
}

func (e *PartError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *PartError) Unwrap() error { return e.Err }

// ErrNotTakeout reports a PATH that is none of what an import reads.
var ErrNotTakeout = errors.New("is not a Takeout part: give takeout-*.zip or takeout-*.tgz files, or the folders they were unpacked into")

// openPart opens path as a part of kind told by what it is: a folder, or
// a file whose first bytes are a zip's or a gzip's.
func openPart(path string, o *Options) (*part, error) {
	p := &part{path: path, open: o.open, loc: o.Location}
	if p.open == nil {
		p.open = openFile
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		p.kind = kindDir
		return p, nil
	}
	if !fi.Mode().IsRegular() {
		return nil, &PartError{Path: path, Err: ErrNotTakeout}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil {
		return nil, &PartError{Path: path, Err: ErrNotTakeout}
	}
	p.size = fi.Size()
	switch {
	case string(magic) == "PK\x03\x04" || string(magic) == "PK\x05\x06":
		p.kind = kindZip
	case magic[0] == 0x1f && magic[1] == 0x8b:
		p.kind = kindTar
	default:
		return nil, &PartError{Path: path, Err: ErrNotTakeout}
	}
	return p, nil
}

// takeoutName is an entry's name made safe and placed: '/'-separated, and
// its folder relative to the Takeout's Google Photos folder (whatever its
// localized name), so that an album's files join up across parts. ok is
// false for a name that leaves its archive ("..", an absolute path) or is
// not text.
func takeoutName(name string) (dir, base, product string, ok bool) {
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return "", "", "", false
	}
	name = strings.ReplaceAll(name, "\\", "/")
	if path.IsAbs(name) || len(name) > 1 && name[1] == ':' {
		return "", "", "", false
	}
	clean := path.Clean(name)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", "", "", false
	}
	comps := strings.Split(clean, "/")
	if comps[0] == "Takeout" && len(comps) >= 3 {
		product, comps = comps[1], comps[2:]
	} else if comps[0] == "Takeout" {
		comps = comps[1:]
	}
	return strings.Join(comps[:len(comps)-1], "/"), comps[len(comps)-1], product, true
}

// dirName is a folder part's file named as an archive would name it: its
// path below root with root's own name in front when the file lies in root
// itself or root is a Takeout folder, so that "…/Takeout",
// "…/Takeout/Google Photos" and a lone album folder all place their files
// as the zips do.
func dirName(root, file string) string {
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return file
	}
	rel = filepath.ToSlash(rel)
	base := filepath.Base(root)
	if base == "Takeout" || !strings.Contains(rel, "/") {
		return base + "/" + rel
	}
	return rel
}

func (p *part) fail(err error) {
	if p.damaged == nil {
		p.damaged = err
		p.report.Damaged = err.Error()
	}
}

// errUnsafeName is an entry whose name leaves the archive.
var errUnsafeName = fmt.Errorf("its name leaves the archive (an absolute path, or ..)")
