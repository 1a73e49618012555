package sidecars

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// TakeoutFile is Google Takeout's per-file JSON, with the fields its
// importers read (immich-go; Ente's own uploader): times in whole seconds
// since 1970 as strings, geoData all zeros when there is no location (as
// Google writes it), description "" when there is no caption, and
// favorited only when true.
type TakeoutFile struct {
	Title            string      `json:"title"`
	Description      string      `json:"description"`
	PhotoTakenTime   TakeoutTime `json:"photoTakenTime"`
	ModificationTime TakeoutTime `json:"modificationTime"`
	GeoData          TakeoutGeo  `json:"geoData"`
	Favorited        bool        `json:"favorited,omitempty"`
}

// TakeoutTime is a Takeout time: Unix seconds as a decimal string, and the
// same instant for people, in UTC.
type TakeoutTime struct {
	Timestamp string `json:"timestamp"`
	Formatted string `json:"formatted"`
}

// TakeoutGeo is a Takeout location; the spans and the altitude are 0 (Ente
// keeps neither).
type TakeoutGeo struct {
	Latitude      float64 `json:"latitude"`
	Longitude     float64 `json:"longitude"`
	Altitude      float64 `json:"altitude"`
	LatitudeSpan  float64 `json:"latitudeSpan"`
	LongitudeSpan float64 `json:"longitudeSpan"`
}

// TakeoutAlbum is the metadata.json of a Takeout album folder, by which
// importers name the album.
type TakeoutAlbum struct {
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Access      string      `json:"access"`
	Date        TakeoutTime `json:"date"`
}

// NewTakeoutTime is t as Takeout writes it: the whole second it falls in.
func NewTakeoutTime(t time.Time) TakeoutTime {
	s := t.Unix() // floors: 1969-12-31T23:59:59.5Z is second -1
	return TakeoutTime{
		Timestamp: strconv.FormatInt(s, 10),
		Formatted: time.Unix(s, 0).UTC().Format("Jan 2, 2006, 3:04:05 PM UTC"),
	}
}

// TakeoutJSON renders in as Takeout's JSON for one file.
func TakeoutJSON(in Info) []byte {
	f := TakeoutFile{
		Title:            in.Title,
		Description:      in.Caption,
		PhotoTakenTime:   NewTakeoutTime(in.Taken),
		ModificationTime: NewTakeoutTime(in.Modified),
		Favorited:        in.Favorite,
	}
	if in.Lat != nil && in.Lon != nil {
		f.GeoData.Latitude, f.GeoData.Longitude = *in.Lat, *in.Lon
	}
	return marshal(f)
}

// AlbumJSON renders an album's Takeout metadata.json.
func AlbumJSON(title string, date time.Time) []byte {
	return marshal(TakeoutAlbum{Title: title, Access: "protected", Date: NewTakeoutTime(date)})
}

// marshal writes v as indented JSON ending in a newline, without escaping
// <, > and & (a person may read these files).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic("sidecars: internal error: " + err.Error()) // plain structs of strings and finite numbers
	}
	return b.Bytes()
}
