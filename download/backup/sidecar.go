package backup

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// sidecar is the JSON quak writes beside each file in <album>/.meta/. It
// keeps the keys of `ente export` (title, description, creationTime,
// modificationTime, location, info) so that folder stays readable both ways,
// and adds Google Takeout's (photoTakenTime, geoData) so photo tools such as
// Immich import the dates and places. docs/backup.md documents it.
type sidecar struct {
	Title            string          `json:"title"`
	Description      *string         `json:"description"`
	CreationTime     string          `json:"creationTime"`
	ModificationTime string          `json:"modificationTime"`
	Location         *location       `json:"location"`
	Info             sidecarInfo     `json:"info"`
	PhotoTakenTime   takeoutTime     `json:"photoTakenTime"`
	GeoData          *takeoutGeoData `json:"geoData,omitempty"`
	Quak             quakInfo        `json:"quak"`
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

// micros turns Ente's µs timestamps into time.
func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func newSidecar(f *state.File, collectionID int64, album string, names []string) *sidecar {
	m := f.Meta
	sc := &sidecar{
		Title:            m.Title,
		CreationTime:     micros(m.CreationTime).Format(time.RFC3339),
		ModificationTime: micros(m.ModificationTime).Format(time.RFC3339),
		Info:             sidecarInfo{ID: f.ID, OwnerID: f.OwnerID, FileNames: names},
		PhotoTakenTime: takeoutTime{
			Timestamp: strconv.FormatInt(m.CreationTime/1_000_000, 10),
			Formatted: micros(m.CreationTime).Format("Jan 2, 2006, 3:04:05 PM UTC"),
		},
		Quak: quakInfo{CollectionID: collectionID, Album: album, FileType: m.FileType, HashCheck: "none"},
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

// visibilityName is how album_meta.json says an album's visibility.
func visibilityName(v int) string {
	switch v {
	case 1:
		return "archived"
	case 2:
		return "hidden"
	}
	return ""
}

// writeJSON writes v, indented, to path atomically (a sidecar or
// album_meta.json).
func (j *job) writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return j.disk.writeFile(path, append(b, '\n'))
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

// removeMeta removes an `ente export` sidecar that describes file id.
func (j *job) removeMeta(path string, id int64) bool {
	if !metaOwnedBy(path, id) {
		return false
	}
	return removeIfExists(j.disk, path)
}

// writeSidecar writes the sidecar of rec's entry in c, removing the one of
// a replaced entry under another name.
func (v *viewer) writeSidecar(rec *state.File, c *state.Collection, old *state.Entry) error {
	e := rec.Entries[c.ID]
	p, err := layout.Join(v.dir, c.Folder, ".meta", e.Name+".json")
	if err != nil {
		return err
	}
	owned := metaOwnedBy(p, rec.ID)
	switch {
	case v.o.Views.style() != sidecars.Ente:
		if owned {
			removeIfExists(v.disk, p) // another style: no JSON in .meta (an adopted export's goes)
		}
	case !owned:
		return fmt.Errorf("%s is another file's `ente export` sidecar; quak does not replace it", filepath.Join(c.Folder, ".meta", e.Name+".json"))
	default:
		sc := newSidecar(rec, c.ID, c.Name, e.Parts)
		sc.Title = e.Meta.Title
		if err := v.writeJSON(p, sc); err != nil {
			return err
		}
	}
	if old != nil && !strings.EqualFold(old.Name, e.Name) {
		v.removeMeta(filepath.Join(filepath.Dir(p), old.Name+".json"), rec.ID)
	}
	return nil
}

// enteSidecar writes the `ente export` sidecar of f's copy in c when the
// style is ente and it is missing or differs, and removes it otherwise.
func (v *viewer) enteSidecar(f *state.File, c *state.Collection, e *state.Entry) (bool, error) {
	p, err := layout.Join(v.dir, c.Folder, ".meta", e.Name+".json")
	if err != nil {
		return false, err
	}
	if v.o.Views.style() != sidecars.Ente {
		return removeIfExists(v.disk, p), nil
	}
	sc := newSidecar(f, c.ID, c.Name, e.Parts)
	sc.Title = e.Meta.Title
	if sameJSON(p, sc) {
		return false, nil
	}
	return true, v.writeJSON(p, sc)
}

// albumMetaOf is album c's album_meta.json.
func (j *job) albumMetaOf(c *state.Collection) albumMeta {
	return albumMeta{ID: c.ID, OwnerID: c.OwnerID, AlbumName: c.Name, IsDeleted: c.Deleted,
		AccountOwnerIDs: []int64{j.o.Keys.UserID}, Visibility: visibilityName(c.Visibility)}
}

// writeAlbumMeta writes album c's album_meta.json.
func (j *job) writeAlbumMeta(c *state.Collection) error {
	p, err := layout.Join(j.dir, c.Folder, ".meta", "album_meta.json")
	if err != nil {
		return err
	}
	return j.writeJSON(p, j.albumMetaOf(c))
}

// refreshAlbumMeta rewrites album c's album_meta.json when it is missing
// or differs.
func (j *job) refreshAlbumMeta(c *state.Collection) error {
	p, err := layout.Join(j.dir, c.Folder, ".meta", "album_meta.json")
	if err != nil {
		return err
	}
	if sameJSON(p, j.albumMetaOf(c)) {
		return nil
	}
	return j.writeJSON(p, j.albumMetaOf(c))
}
