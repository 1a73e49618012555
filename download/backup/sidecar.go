package backup

import (
	"strconv"
	"time"

	"github.com/quak-photos/quak/download/state"
)

// sidecar is the JSON quak writes beside each file in <album>/.meta/. It
// keeps the keys of `ente export` (title, description, creationTime,
// modificationTime, location, info) so that folder stays readable both ways,
// and adds Google Takeout's (photoTakenTime, geoData) so photo tools such as
// Immich import the dates and places. README.md documents it.
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
}
