package restore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/apiclient/keys"
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
}

// exportFile is a file's sidecar in .meta: its title (edits applied),
// caption, place and times (RFC 3339), and its id, hash and the names of
// its parts in the album folder.
type exportFile struct {
	Title            string  `json:"title"`
	Description      *string `json:"description"`
	Location         *struct {
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
// per file id, in every album folder that holds a copy of it.
func readExport(dir string) (*plan, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &plan{albums: map[int64]*sourceAlbum{}}
	byID := map[int64]*original{}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == ".quak" {
			continue
		}
		if err := p.readExportAlbum(filepath.Join(dir, e.Name()), byID); err != nil {
			return nil, err
		}
	}
	p.finish(byID)
	return p, nil
}

// finish takes the originals of an export that have their parts, in the
// order of their ids; the others, and those no copy could be read of
// (unread), are left out.
func (p *plan) finish(byID map[int64]*original) {
	for id := range p.unread {
		if byID[id] == nil {
			p.leftOut++
		}
	}
	for _, o := range byID {
		if o.parts == nil {
			p.leftOut++
			continue
		}
		sort.Slice(o.albums, func(i, j int) bool { return o.albums[i] < o.albums[j] })
		p.files = append(p.files, o)
	}
	sort.Slice(p.files, func(i, j int) bool { return p.files[i].rec.ID < p.files[j].rec.ID })
}

// readExportAlbum adds the files of one album folder of an export.
func (p *plan) readExportAlbum(folder string, byID map[int64]*original) error {
	meta := filepath.Join(folder, exportMetaDir)
	var a exportAlbum
	if err := readJSONFile(filepath.Join(meta, exportAlbumMeta), &a); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // not an album folder
		}
		return err
	}
	if a.IsDeleted {
		return nil
	}
	if _, dup := p.albums[a.ID]; dup {
		return fmt.Errorf("%s: album %d is in two folders of the export", filepath.Base(folder), a.ID)
	}
	p.albums[a.ID] = exportAlbumOf(a)
	names, err := filepath.Glob(filepath.Join(meta, "*.json"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if filepath.Base(name) == exportAlbumMeta {
			continue
		}
		var f exportFile
		if err := readJSONFile(name, &f); err != nil {
			return err
		}
		o, err := exportOriginal(folder, &f, byID[f.Info.ID])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if o != nil {
			byID[f.Info.ID] = o
			o.albums = appendOnce(o.albums, a.ID)
		}
	}
	return nil
}

// exportAlbumOf is an export's album as the target gets it: an export
// records no album type or visibility, so Ente's special albums are told
// by their names.
func exportAlbumOf(a exportAlbum) *sourceAlbum {
	sa := &sourceAlbum{id: a.ID, name: a.AlbumName, typ: "album"}
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
func exportOriginal(folder string, f *exportFile, o *original) (*original, error) {
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
	if o == nil {
		m, err := exportMeta(f)
		if err != nil {
			return nil, err
		}
		o = &original{rec: &state.File{ID: f.Info.ID, Meta: m}}
	}
	if o.parts == nil && parts != nil {
		hashes, err := exportHashes(f, parts)
		if err != nil {
			return nil, err
		}
		o.parts, o.hashes = parts, hashes
	}
	return o, nil
}

// exportMeta is a sidecar's metadata as a backup records it.
func exportMeta(f *exportFile) (state.Meta, error) {
	m := state.Meta{Title: f.Title, FileType: fileTypeOf(f)}
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
	return m, nil
}

// videoExts are the extensions Ente's apps upload as videos.
var videoExts = map[string]bool{".mov": true, ".mp4": true, ".m4v": true, ".avi": true, ".wmv": true, ".flv": true,
	".mkv": true, ".webm": true, ".3gp": true, ".3g2": true, ".ogv": true, ".mpg": true, ".mpeg": true, ".mts": true, ".m2ts": true}

// fileTypeOf is Ente's file type: a live photo has two parts, a video a
// video's extension.
func fileTypeOf(f *exportFile) int {
	switch {
	case len(f.Info.FileNames) == 2:
		return 2
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
func exportHashes(f *exportFile, parts []string) ([]string, error) {
	if f.Info.Hash != nil && *f.Info.Hash != "" {
		hs := strings.Split(*f.Info.Hash, ":")
		if len(hs) != len(parts) {
			return nil, fmt.Errorf("its hash has %d parts, its file names %d", len(hs), len(parts))
		}
		return hs, nil
	}
	var hs []string
	for _, p := range parts {
		h, err := hashFile(p)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// hashFile is the base64 BLAKE2b-512 of a file's bytes, as Ente hashes.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := keys.NewHash()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return keys.EncodeB64(h.Sum(nil)), nil
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func appendOnce(ids []int64, id int64) []int64 {
	for _, x := range ids {
		if x == id {
			return ids
		}
	}
	return append(ids, id)
}
