package views

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// sidecarJSON is the JSON quak writes beside each file in <album>/.meta/. It
// keeps the keys of `ente export` (title, description, creationTime,
// modificationTime, location, info) so that folder stays readable both ways,
// and adds Google Takeout's (photoTakenTime, geoData) so photo tools such as
// Immich import the dates and places. docs/backup.md documents it.
type sidecarJSON struct {
	Title            string          `json:"title"`
	Description      *string         `json:"description"`
	CreationTime     string          `json:"creationTime"`
	ModificationTime string          `json:"modificationTime"`
	Location         *location       `json:"location"`
	Info             sidecarInfo     `json:"info"`
	PhotoTakenTime   takeoutTime     `json:"photoTakenTime"`
	GeoData          *takeoutGeoData `json:"geoData,omitempty"`
	// Visibility is quak's addition, as in album_meta.json: "archived" or
	// "hidden" for a file its owner archived or hid on its own, absent for
	// a visible one.
	Visibility string   `json:"visibility,omitempty"`
	Quak       quakInfo `json:"quak"`
}

type location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

type sidecarInfo struct {
	ID        int64    `json:"id"`
	Hash      *string  `json:"hash"`
	OwnerID   int64    `json:"ownerID"`
	FileNames []string `json:"fileNames"`
}

type takeoutTime struct {
	Timestamp string `json:"timestamp"`
	Formatted string `json:"formatted"`
}

type takeoutGeoData struct {
	Latitude      float64 `json:"latitude"`
	Longitude     float64 `json:"longitude"`
	Altitude      float64 `json:"altitude"`
	LatitudeSpan  float64 `json:"latitudeSpan"`
	LongitudeSpan float64 `json:"longitudeSpan"`
}

type quakInfo struct {
	CollectionID int64  `json:"collectionID"`
	Album        string `json:"album"`
	FileType     int    `json:"fileType"`
	HashCheck    string `json:"hashCheck"` // "ok", "mismatch" or "none"
}

// newSidecar is the sidecar of f's copy e in album c, titled as that
// copy is named.
func newSidecar(f *state.File, c *state.Collection, e *state.Entry) *sidecarJSON {
	m := f.Meta
	sc := &sidecarJSON{
		Title:            e.Meta.Title,
		CreationTime:     micros(m.CreationTime).Format(time.RFC3339),
		ModificationTime: micros(m.ModificationTime).Format(time.RFC3339),
		Info:             sidecarInfo{ID: f.ID, OwnerID: f.OwnerID, FileNames: e.Parts},
		PhotoTakenTime: takeoutTime{
			Timestamp: strconv.FormatInt(m.CreationTime/1_000_000, 10),
			Formatted: micros(m.CreationTime).Format("Jan 2, 2006, 3:04:05 PM UTC"),
		},
		Quak:       quakInfo{CollectionID: c.ID, Album: c.Name, FileType: m.FileType, HashCheck: "none"},
		Visibility: visibilityName(m.Visibility),
	}
	if m.Caption != "" {
		c := m.Caption
		sc.Description = &c
	}
	if m.Hash != "" {
		h := m.Hash
		sc.Info.Hash = &h
		sc.Quak.HashCheck = "ok"
		if f.Status == state.HashMismatch {
			sc.Quak.HashCheck = "mismatch"
		}
	}
	if m.Latitude != nil && m.Longitude != nil {
		sc.Location = &location{*m.Latitude, *m.Longitude}
		sc.GeoData = &takeoutGeoData{Latitude: *m.Latitude, Longitude: *m.Longitude}
	}
	return sc
}

// albumMeta is `ente export`'s album_meta.json, by which folders are
// recognised.
type albumMeta struct {
	ID              int64   `json:"id"`
	OwnerID         int64   `json:"ownerID"`
	AlbumName       string  `json:"albumName"`
	IsDeleted       bool    `json:"isDeleted"`
	AccountOwnerIDs []int64 `json:"accountOwnerIDs"`
	// Visibility is quak's addition: "archived" or "hidden" for an album
	// so in Ente's apps, absent for a visible one.
	Visibility string `json:"visibility,omitempty"`
}

// visibilityName is how album_meta.json and the sidecars say a
// visibility.
func visibilityName(v int) string {
	switch v {
	case 1:
		return "archived"
	case 2:
		return "hidden"
	}
	return ""
}

// metaFiles are the JSON files in each album's .meta folder: a sidecar
// per album copy, and album_meta.json.
type metaFiles struct {
	c *Config
}

// sidecarPath is the sidecar's path of name in album c's folder.
func (m *metaFiles) sidecarPath(c *state.Collection, name string) (string, error) {
	return layout.Join(m.c.Dir, c.Folder, ".meta", name+".json")
}

// writeSidecar writes the sidecar of rec's entry in c, removing the one of a
// replaced entry under another name.
func (m *metaFiles) writeSidecar(rec *state.File, c *state.Collection, old *state.Entry) error {
	e := rec.Entries[c.ID]
	p, err := m.sidecarPath(c, e.Name)
	if err != nil {
		return err
	}
	owned := ownedBy(p, rec.ID)
	switch {
	case m.c.Options.style() != sidecars.Ente:
		if owned {
			removeIfExists(m.c.Disk, p) // another style: no JSON in .meta (an adopted export's goes)
		}
	case !owned:
		return fmt.Errorf("%s is another file's `ente export` sidecar; quak does not replace it", filepath.Join(c.Folder, ".meta", e.Name+".json"))
	default:
		if err := m.writeJSON(p, newSidecar(rec, c, e)); err != nil {
			return err
		}
	}
	if old != nil && !strings.EqualFold(old.Name, e.Name) {
		m.remove(filepath.Dir(filepath.Dir(p)), old.Name, rec.ID)
	}
	return nil
}

// convert writes the sidecar of f's copy e in c when the style is ente
// and it is missing or differs, and removes it otherwise.
func (m *metaFiles) convert(f *state.File, c *state.Collection, e *state.Entry) (bool, error) {
	p, err := m.sidecarPath(c, e.Name)
	if err != nil {
		return false, err
	}
	if m.c.Options.style() != sidecars.Ente {
		return removeIfExists(m.c.Disk, p), nil
	}
	return m.refreshAt(p, newSidecar(f, c, e))
}

// refresh writes the sidecar of f's copy e in c when the style is ente
// and it is missing or differs.
func (m *metaFiles) refresh(f *state.File, c *state.Collection, e *state.Entry) (bool, error) {
	p, err := m.sidecarPath(c, e.Name)
	if err != nil || m.c.Options.style() != sidecars.Ente {
		return false, err
	}
	return m.refreshAt(p, newSidecar(f, c, e))
}

// refreshAt writes v to p unless p holds it already, and says whether it
// did.
func (m *metaFiles) refreshAt(p string, v any) (bool, error) {
	if sameJSON(p, v) {
		return false, nil
	}
	return true, m.writeJSON(p, v)
}

// remove removes the sidecar of name in album folder dir if it describes
// file id.
func (m *metaFiles) remove(dir, name string, id int64) bool {
	path := filepath.Join(dir, ".meta", name+".json")
	if !ownedBy(path, id) {
		return false
	}
	return removeIfExists(m.c.Disk, path)
}

// writeJSON writes v, indented, to path atomically (a sidecar or
// album_meta.json).
func (m *metaFiles) writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return m.c.Disk.WriteFile(path, append(b, '\n'))
}

// albumMetaOf is album c's album_meta.json.
func (m *metaFiles) albumMetaOf(c *state.Collection) albumMeta {
	return albumMeta{ID: c.ID, OwnerID: c.OwnerID, AlbumName: c.Name, IsDeleted: c.Deleted,
		AccountOwnerIDs: []int64{m.c.UserID}, Visibility: visibilityName(c.Visibility)}
}

// writeAlbum writes album c's album_meta.json.
func (m *metaFiles) writeAlbum(c *state.Collection) error {
	p, err := layout.Join(m.c.Dir, c.Folder, ".meta", "album_meta.json")
	if err != nil {
		return err
	}
	return m.writeJSON(p, m.albumMetaOf(c))
}

// refreshAlbum rewrites album c's album_meta.json when it is missing or
// differs.
func (m *metaFiles) refreshAlbum(c *state.Collection) error {
	p, err := layout.Join(m.c.Dir, c.Folder, ".meta", "album_meta.json")
	if err != nil {
		return err
	}
	_, err = m.refreshAt(p, m.albumMetaOf(c))
	return err
}

// sameJSON reports whether the file at path holds exactly what writeJSON
// would write for v.
func sameJSON(path string, v any) bool {
	want, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return false
	}
	return sameContent(path, append(want, '\n'))
}

// ownedBy reports whether the `ente export` sidecar at path describes
// file id (quak's, or an adopted export's of the same file), or is no
// regular file (absent; a folder in the way fails quak's write on its
// own): the only .meta JSON quak writes over or removes.
func ownedBy(path string, id int64) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var sc struct {
		Info struct {
			ID int64 `json:"id"`
		} `json:"info"`
	}
	return json.Unmarshal(b, &sc) == nil && sc.Info.ID == id
}

// readSidecar reads a sidecar in .meta (quak's or an `ente export`'s): the
// file id it describes and the names it gives the file's parts, or 0 when
// it cannot be read.
func readSidecar(path string) (int64, []string) {
	var sc struct {
		Info struct {
			ID        int64    `json:"id"`
			FileNames []string `json:"fileNames"`
		} `json:"info"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &sc) != nil {
		return 0, nil
	}
	return sc.Info.ID, sc.Info.FileNames
}

// readAlbumID is the album id album folder dir's album_meta.json names,
// or 0.
func readAlbumID(dir string) int64 {
	var m albumMeta
	b, err := os.ReadFile(filepath.Join(dir, ".meta", "album_meta.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return 0
	}
	return m.ID
}
