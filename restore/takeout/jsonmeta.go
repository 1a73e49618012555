package takeout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// maxJSON caps a metadata JSON quak reads: Google's are a few KiB (an
// album's with many comments some hundreds); a larger one is not read.
const maxJSON = 4 << 20

// photoMeta is what a photo's JSON says: Google's fields as Ente's own
// importer reads them (times in µs, 0 when absent).
type photoMeta struct {
	title        string
	caption      string
	taken        int64 // photoTakenTime, else creationTime
	modified     int64
	lat, long    *float64
	favorite     bool
	archived     bool
	trashed      bool
	locked       bool // in Google's Locked Folder
	partner      bool // shared by a partner account
	hasTimestamp bool
}

// albumMeta is what an album's JSON says.
type albumMeta struct {
	title string
}

// errNotGoogle reports a JSON that is not one of Google Photos' metadata
// files: another product's, a tool's, or damaged.
var errNotGoogle = errors.New("not Google Photos metadata")

// gTime is one of Google's times: {"timestamp": "1695394176", ...}, the
// seconds as a string (or a number, as Ente's own exports write them).
type gTime struct {
	Timestamp json.RawMessage `json:"timestamp"`
}

type gPlace struct {
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
}

type gJSON struct {
	Title            *string         `json:"title"`
	Description      json.RawMessage `json:"description"`
	PhotoTakenTime   *gTime          `json:"photoTakenTime"`
	CreationTime     *gTime          `json:"creationTime"`
	ModificationTime *gTime          `json:"modificationTime"`
	LastModified     *gTime          `json:"photoLastModifiedTime"`
	GeoData          *gPlace         `json:"geoData"`
	GeoDataExif      *gPlace         `json:"geoDataExif"`
	Favorited        json.RawMessage `json:"favorited"`
	Archived         json.RawMessage `json:"archived"`
	Trashed          json.RawMessage `json:"trashed"`
	InLockedFolder   json.RawMessage `json:"inLockedFolder"`
	Date             json.RawMessage `json:"date"`
	Access           json.RawMessage `json:"access"`
	AlbumData        *gJSON          `json:"albumData"`
	Origin           *struct {
		FromPartnerSharing json.RawMessage `json:"fromPartnerSharing"`
	} `json:"googlePhotosOrigin"`
}

// parseMeta reads a Google Photos JSON: a photo's (non-nil photoMeta) or
// an album's (non-nil albumMeta). Anything else, including JSON nested
// past encoding/json's limit, is errNotGoogle.
func parseMeta(b []byte) (*photoMeta, *albumMeta, error) {
	var g gJSON
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n\ufeff"), []byte("{")) {
		return nil, nil, errNotGoogle
	}
	if err := json.Unmarshal(bytes.TrimPrefix(b, []byte("\ufeff")), &g); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errNotGoogle, err)
	}
	switch {
	case g.PhotoTakenTime != nil || g.CreationTime != nil && g.AlbumData == nil && g.Date == nil:
		return g.photo(), nil, nil
	case g.AlbumData != nil && g.AlbumData.Title != nil:
		return nil, &albumMeta{title: cleanAlbumName(*g.AlbumData.Title)}, nil
	case g.Title != nil && (*g.Title != "" || g.Date != nil || g.Access != nil):
		return nil, &albumMeta{title: cleanAlbumName(*g.Title)}, nil
	}
	return nil, nil, errNotGoogle
}

func (g *gJSON) photo() *photoMeta {
	m := &photoMeta{favorite: isTrue(g.Favorited), archived: isTrue(g.Archived), trashed: isTrue(g.Trashed),
		locked: isTrue(g.InLockedFolder)}
	if g.Title != nil {
		m.title = cleanTitle(*g.Title)
	}
	var s string
	if json.Unmarshal(g.Description, &s) == nil {
		m.caption = s
	}
	m.taken = g.PhotoTakenTime.micros()
	if m.taken == 0 {
		m.taken = g.CreationTime.micros()
	}
	m.hasTimestamp = m.taken != 0
	if m.modified = g.ModificationTime.micros(); m.modified == 0 {
		m.modified = g.LastModified.micros()
	}
	if p := g.GeoData.place(); p != nil {
		m.lat, m.long = &p[0], &p[1]
	} else if p := g.GeoDataExif.place(); p != nil {
		m.lat, m.long = &p[0], &p[1]
	}
	m.partner = g.Origin != nil && len(g.Origin.FromPartnerSharing) > 0 && string(g.Origin.FromPartnerSharing) != "null" &&
		string(g.Origin.FromPartnerSharing) != "false"
	return m
}

// micros reads a Google time as µs since the epoch, 0 when absent, zero or
// not a time: Google writes "0" for a time it does not know.
func (t *gTime) micros() int64 {
	if t == nil {
		return 0
	}
	var secs float64
	var s string
	switch {
	case json.Unmarshal(t.Timestamp, &s) == nil:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0
		}
		secs = float64(v)
	case json.Unmarshal(t.Timestamp, &secs) == nil:
		secs = math.Floor(secs)
	default:
		return 0
	}
	// Beyond year 9999 (or before 0) is no photo's time.
	if secs == 0 || secs > 253402300799 || secs < -62135596800 {
		return 0
	}
	return int64(secs) * 1_000_000
}

// place reads a place, nil when absent or (0, 0): Google's "no place".
func (p *gPlace) place() *[2]float64 {
	if p == nil || p.Latitude == nil || p.Longitude == nil {
		return nil
	}
	lat, long := *p.Latitude, *p.Longitude
	if lat == 0 && long == 0 || math.Abs(lat) > 90 || math.Abs(long) > 180 {
		return nil
	}
	return &[2]float64{lat, long}
}

func isTrue(raw json.RawMessage) bool { return string(raw) == "true" }

// cleanAlbumName keeps an album's title as Ente can show it.
func cleanAlbumName(s string) string {
	s = cleanTitle(s)
	for len(s) > 256 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
