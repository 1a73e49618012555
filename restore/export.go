package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// An Ente CLI export (`ente export`) is a folder per album, each with a
// .meta folder: album_meta.json names the album, and NAME.json beside it
// describes one file of the album, whose parts (two for a live photo) sit
// in the album folder. A file in k albums is k copies with one id.
const (
	exportMetaDir   = ".meta"
	exportAlbumMeta = "album_meta.json"
)

// exportAlbum is an album's album_meta.json.
type exportAlbum struct {
	ID        int64  `json:"id"`
	AlbumName string `json:"albumName"`
	IsDeleted bool   `json:"isDeleted"`
	// Visibility is what quak's own sidecars add ("archived", "hidden"):
	// a quak backup whose .quak was lost is read as an export.
	Visibility string `json:"visibility,omitempty"`
}

// exportFile is a file's sidecar in .meta: its title (edits applied),
// caption, place and times (RFC 3339), and its id, hash and the names of
// its parts in the album folder.
type exportFile struct {
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Location    *struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"location"`
	CreationTime     string `json:"creationTime"`
	ModificationTime string `json:"modificationTime"`
	Info             struct {
		ID        int64    `json:"id"`
		Hash      *string  `json:"hash"`
		FileNames []string `json:"fileNames"`
	} `json:"info"`
	// Quak is what quak's own sidecars add: the file's type, known rather
	// than told from its name.
	Quak *struct {
		FileType *int `json:"fileType"`
	} `json:"quak,omitempty"`
	// Visibility is quak's addition too: "archived" or "hidden" for a file
	// its owner archived or hid on its own.
	Visibility string `json:"visibility,omitempty"`
}

// IsEnteExport reports whether dir holds an Ente CLI export: an album
// folder with its album_meta.json.
func IsEnteExport(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && isFile(filepath.Join(dir, e.Name(), exportMetaDir, exportAlbumMeta)) {
			return true
		}
	}
	return false
}

func isFile(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// readExport reads an Ente CLI export's albums and files: one original
// per file id, in every album folder that holds a copy of it. A sidecar
// quak cannot take is that file's failure, not the run's.
func readExport(ctx context.Context, dir string) (*plan, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &plan{dir: dir, albums: map[int64]*sourceAlbum{}, unread: map[int64][]int64{}}
	byID := map[int64]*original{}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == folder.StateDir {
			continue
		}
		if err := p.readExportAlbum(ctx, filepath.Join(dir, e.Name()), byID); err != nil {
			return nil, err
		}
	}
	p.finish(byID)
	return p, nil
}

// finish takes the originals of an export that have their parts, in the
// order of their ids; the others, and those no copy could be read of
// (unread), fail by name.
func (p *plan) finish(byID map[int64]*original) {
	for id, albums := range p.unread {
		o := byID[id]
		if o == nil {
			p.failOne(Failure{Source: id, Title: fmt.Sprintf("file %d", id), Error: "no copy of it has its metadata JSON beside it"})
			continue
		}
		for _, a := range albums {
			if !slices.Contains(o.albums, a) { // another copy's JSON describes it
				o.albums = append(o.albums, a)
			}
		}
	}
	for _, o := range byID {
		if o.parts == nil {
			p.failOne(Failure{Source: o.rec.ID, Title: o.rec.Meta.Title, Error: "no album folder holds it as a plain file"})
			continue
		}
		sort.Slice(o.albums, func(i, j int) bool { return o.albums[i] < o.albums[j] })
		p.files = append(p.files, o)
	}
	sort.Slice(p.files, func(i, j int) bool { return p.files[i].rec.ID < p.files[j].rec.ID })
}

// maxPlanFailures caps the failures an export's reading names one by one;
// the rest are counted in one more.
const maxPlanFailures = 1000

// fail records a file of an export that cannot be restored, by the path
// of what describes it.
func (p *plan) fail(path string, id int64, err error) {
	if rel, e := filepath.Rel(p.dir, path); e == nil {
		path = rel
	}
	p.failOne(Failure{Source: id, Title: path, Error: err.Error()})
}

// failOne counts f, and names it among the first maxPlanFailures.
func (p *plan) failOne(f Failure) {
	p.failed++
	if len(p.failures) < maxPlanFailures {
		p.failures = append(p.failures, f)
	}
}

// readExportAlbum adds the files of one album folder of an export.
func (p *plan) readExportAlbum(ctx context.Context, folder string, byID map[int64]*original) error {
	meta := filepath.Join(folder, exportMetaDir)
	if fi, err := os.Lstat(meta); err != nil || !fi.IsDir() {
		return nil // not an album folder (a link to one elsewhere is not read)
	}
	var a exportAlbum
	if err := readJSONFile(filepath.Join(meta, exportAlbumMeta), &a); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			p.fail(filepath.Join(meta, exportAlbumMeta), 0, err)
		}
		return nil
	}
	if a.IsDeleted {
		return nil
	}
	if _, dup := p.albums[a.ID]; dup {
		p.fail(folder, 0, fmt.Errorf("album %d is in two folders of the export; this one is left out", a.ID))
		return nil
	}
	p.albums[a.ID] = exportAlbumOf(a)
	entries, err := os.ReadDir(meta)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := filepath.Join(meta, e.Name())
		if e.Name() == exportAlbumMeta || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var f exportFile
		if err := readJSONFile(name, &f); err != nil {
			p.fail(name, 0, err)
			continue
		}
		if err := p.addCopy(ctx, folder, &f, a.ID, byID); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.fail(name, f.Info.ID, err)
		}
	}
	return nil
}

// addCopy adds one album's copy of a file to its original.
func (p *plan) addCopy(ctx context.Context, folder string, f *exportFile, album int64, byID map[int64]*original) error {
	o, err := exportOriginal(ctx, folder, f, byID[f.Info.ID])
	if err != nil {
		return err
	}
	byID[f.Info.ID] = o
	if !slices.Contains(o.albums, album) {
		o.albums = append(o.albums, album)
	}
	return nil
}

// exportAlbumOf is an export's album as the target gets it: an export
// records no album type or visibility, so Ente's special albums are told
// by their names.
func exportAlbumOf(a exportAlbum) *sourceAlbum {
	sa := &sourceAlbum{id: a.ID, name: a.AlbumName, typ: "album"}
	switch a.Visibility {
	case "archived":
		sa.visibility = 1
	case "hidden":
		sa.visibility = 2
	}
	switch a.AlbumName {
	case "Favorites":
		sa.typ = "favorites"
	case "Uncategorized":
		sa.typ = "uncategorized"
	case hiddenName:
		sa.visibility = 2
	}
	return sa
}

// exportOriginal makes the original one sidecar describes, or adds this
// album's copy to o, the one an earlier album gave. Parts that are not
// plain files of the album folder are never read; a copy without them
// leaves o without parts (left out, unless another album has them).
func exportOriginal(ctx context.Context, folder string, f *exportFile, o *original) (*original, error) {
	if f.Info.ID == 0 || len(f.Info.FileNames) == 0 || len(f.Info.FileNames) > 2 {
		return nil, errors.New("not a sidecar of Ente's export: no id or part names")
	}
	var parts []string
	for _, n := range f.Info.FileNames {
		if !isName(n) {
			return nil, fmt.Errorf("part name %q is not a name in its album folder", n)
		}
		if !isFile(filepath.Join(folder, n)) {
			parts = nil
			break
		}
		parts = append(parts, filepath.Join(folder, n))
	}
	m, err := exportMeta(f)
	if err != nil {
		return nil, err
	}
	if f.Info.Hash != nil && *f.Info.Hash != "" && strings.Count(*f.Info.Hash, ":")+1 != len(f.Info.FileNames) {
		return nil, fmt.Errorf("its hash has %d parts, its file names %d: one part of a live photo was not exported",
			strings.Count(*f.Info.Hash, ":")+1, len(f.Info.FileNames))
	}
	if o == nil {
		o = &original{rec: &state.File{ID: f.Info.ID, Meta: m}}
	} else if o.rec.Meta.Hash != m.Hash || !sameType(o.rec.Meta.FileType, m.FileType) {
		return nil, fmt.Errorf("id %d is %q in another album: two files under one id", f.Info.ID, o.rec.Meta.Title)
	}
	if o.parts == nil && parts != nil {
		hashes, err := exportHashes(ctx, f, parts)
		if err != nil {
			return nil, err
		}
		o.parts, o.hashes = parts, hashes
		if o.rec.Meta.FileType == 0 && sniffsAsVideo(parts[0]) {
			o.rec.Meta.FileType = 1
		}
	}
	return o, nil
}

// sameType reports whether a copy whose name says type named is of an
// original of type had: the same, or a video told by its bytes, which its
// other copies' names do not tell.
func sameType(had, named int) bool { return had == named || had == 1 && named == 0 }

// exportMeta is a sidecar's metadata as a backup records it.
func exportMeta(f *exportFile) (catalog.Meta, error) {
	m := catalog.Meta{Title: f.Title, FileType: fileTypeOf(f)}
	var err error
	if m.CreationTime, err = micros(f.CreationTime); err != nil {
		return m, fmt.Errorf("creationTime: %w", err)
	}
	if m.ModificationTime, err = micros(f.ModificationTime); err != nil {
		return m, fmt.Errorf("modificationTime: %w", err)
	}
	if f.Description != nil {
		m.Caption = *f.Description
	}
	if l := f.Location; l != nil {
		m.Latitude, m.Longitude = &l.Latitude, &l.Longitude
	}
	if f.Info.Hash != nil {
		m.Hash = *f.Info.Hash
	}
	m.Visibility = visibilityOf(f.Visibility)
	return m, nil
}

// visibilityOf is the visibility quak's sidecars name ("archived" 1,
// "hidden" 2); anything else is visible (0).
func visibilityOf(name string) int {
	switch name {
	case "archived":
		return 1
	case "hidden":
		return 2
	}
	return 0
}

// videoExts are extensions of videos. An export does not record a file's
// type; what the name does not tell, the first bytes may (sniffsAsVideo).
var videoExts = map[string]bool{".mov": true, ".qt": true, ".mp4": true, ".m4v": true, ".avi": true, ".wmv": true,
	".asf": true, ".flv": true, ".f4v": true, ".mkv": true, ".webm": true, ".3gp": true, ".3gpp": true, ".3g2": true,
	".ogv": true, ".ogm": true, ".mpg": true, ".mpeg": true, ".m2v": true, ".mpe": true, ".vob": true, ".ts": true,
	".mts": true, ".m2ts": true, ".mod": true, ".tod": true, ".dv": true, ".divx": true, ".rm": true, ".rmvb": true,
	".mxf": true, ".hevc": true, ".insv": true, ".lrv": true}

// sniffsAsVideo reports a file whose first bytes are a video's.
func sniffsAsVideo(path string) bool {
	b, err := readAtMost(path, 512)
	return err == nil && strings.HasPrefix(http.DetectContentType(b), "video/")
}

// fileTypeOf is Ente's file type: a live photo has two parts; an image
// or a video is as quak's own sidecar records it, else a video has a
// video's extension.
func fileTypeOf(f *exportFile) int {
	switch {
	case len(f.Info.FileNames) == 2:
		return 2
	case f.Quak != nil && f.Quak.FileType != nil && (*f.Quak.FileType == 0 || *f.Quak.FileType == 1):
		return *f.Quak.FileType
	case videoExts[strings.ToLower(filepath.Ext(f.Info.FileNames[0]))]:
		return 1
	}
	return 0
}

// micros reads an RFC 3339 time as Ente's µs; an empty one is 0.
func micros(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMicro(), nil
}

// exportHashes are the hashes the parts must have: the sidecar's (split
// for a live photo), or, for a file Ente recorded without one, those of
// the parts as they are (the export is then all quak can vouch for).
func exportHashes(ctx context.Context, f *exportFile, parts []string) ([]string, error) {
	if f.Info.Hash != nil && *f.Info.Hash != "" {
		hs := strings.Split(*f.Info.Hash, ":")
		if len(hs) != len(parts) {
			return nil, fmt.Errorf("its hash has %d parts, its file names %d", len(hs), len(parts))
		}
		return hs, nil
	}
	var hs []string
	for _, p := range parts {
		f, done, err := readPlain(ctx, p, nil)
		if err != nil {
			return nil, err
		}
		h, err := download.HashOf(f)
		done()
		if err != nil {
			return nil, err
		}
		hs = append(hs, keys.EncodeB64(h))
	}
	return hs, nil
}

// maxJSON caps what quak reads of an export's JSON: a sidecar is a few
// hundred bytes, the desktop app's record about a hundred a file.
const maxJSON = 64 << 20

// readJSONFile reads the JSON file at path into v: a plain file only (not
// a link, a pipe or a device) and at most maxJSON bytes.
func readJSONFile(path string, v any) error { return readJSONFileMax(path, v, maxJSON) }

// readJSONFileMax is readJSONFile with its own cap.
func readJSONFileMax(path string, v any, limit int64) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a plain file", path)
	}
	if fi.Size() > limit {
		return fmt.Errorf("%s: %d bytes, more than quak reads of such a file (%d)", path, fi.Size(), limit)
	}
	b, err := readAtMost(path, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readAtMost reads up to limit bytes of the plain file at path.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, _, err := openPlain(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, limit))
}
