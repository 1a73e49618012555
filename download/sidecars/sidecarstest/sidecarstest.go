// Package sidecarstest reads quak's sidecars back the way other tools do:
// XMP with exiftool (a third-party reader, not quak's own parser) and
// Takeout JSON with a strict decoder of Google Takeout's schema.
package sidecarstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// XMP is what exiftool read from one XMP sidecar. Absent tags are zero.
type XMP struct {
	File               string
	DateTimeOriginal   time.Time // with the offset it was written with
	CreateDate         time.Time
	DateCreated        time.Time
	HasDate            bool
	Lat, Lon           float64
	HasGPS             bool
	Title, Description string
	Rating             string
	Subject, TagsList  []string
	Warning, Error     string
}

// RequireExiftool skips the test, saying why, when exiftool is not installed.
func RequireExiftool(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("exiftool")
	if err != nil {
		tb.Skip("exiftool is not installed (apt-get install libimage-exiftool-perl): XMP sidecars are read back with it")
	}
	return p
}

// ReadXMP runs exiftool once over paths and returns what it read from each,
// in order. The test skips where exiftool is missing.
func ReadXMP(tb testing.TB, paths ...string) []XMP {
	tb.Helper()
	exiftool := RequireExiftool(tb)
	args := append([]string{"-j", "-n", "-G1", "-charset", "filename=utf8"}, paths...)
	var stderr bytes.Buffer
	cmd := exec.Command(exiftool, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		tb.Fatalf("exiftool: %v: %s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber() // exiftool prints number-like text as numbers: keep the digits
	var raw []map[string]any
	if err := dec.Decode(&raw); err != nil {
		tb.Fatalf("exiftool's JSON: %v", err)
	}
	if len(raw) != len(paths) {
		tb.Fatalf("exiftool read %d files of %d: %s", len(raw), len(paths), stderr.String())
	}
	res := make([]XMP, len(raw))
	for i, m := range raw {
		res[i] = toXMP(tb, m)
	}
	return res
}

func toXMP(tb testing.TB, m map[string]any) XMP {
	tb.Helper()
	x := XMP{File: text(m["SourceFile"]), Title: text(m["XMP-dc:Title"]), Description: text(m["XMP-dc:Description"]),
		Rating: text(m["XMP-xmp:Rating"]), Warning: text(m["ExifTool:Warning"]), Error: text(m["ExifTool:Error"])}
	x.Subject, x.TagsList = values(m["XMP-dc:Subject"]), values(m["XMP-digiKam:TagsList"])
	var err error
	if v, ok := m["XMP-exif:DateTimeOriginal"]; ok {
		x.HasDate = true
		x.DateTimeOriginal, err = exifDate(text(v))
		if err != nil {
			tb.Errorf("%s: DateTimeOriginal: %v", x.File, err)
		}
		if x.CreateDate, err = exifDate(text(m["XMP-xmp:CreateDate"])); err != nil {
			tb.Errorf("%s: CreateDate: %v", x.File, err)
		}
		if x.DateCreated, err = exifDate(text(m["XMP-photoshop:DateCreated"])); err != nil {
			tb.Errorf("%s: DateCreated: %v", x.File, err)
		}
	}
	lat, okLat := m["XMP-exif:GPSLatitude"]
	lon, okLon := m["XMP-exif:GPSLongitude"]
	if okLat || okLon {
		x.HasGPS = true
		if x.Lat, err = number(lat); err != nil {
			tb.Errorf("%s: GPSLatitude: %v", x.File, err)
		}
		if x.Lon, err = number(lon); err != nil {
			tb.Errorf("%s: GPSLongitude: %v", x.File, err)
		}
	}
	return x
}

// exifDate reads exiftool's rendering of an XMP date, which must carry
// its offset.
func exifDate(s string) (time.Time, error) {
	return time.Parse("2006:01:02 15:04:05.999999999-07:00", s)
}

// values reads a list, which exiftool prints as one value when it has one.
func values(v any) []string {
	switch s := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, len(s))
		for i, v := range s {
			out[i] = text(v)
		}
		return out
	}
	return []string{text(v)}
}

func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return fmt.Sprint(v)
}

func number(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number: %v", v)
	}
	return n.Float64()
}

// Takeout is a decoded Takeout JSON, its times as instants.
type Takeout struct {
	Title, Description string
	Taken, Modified    time.Time
	Lat, Lon           float64
	Favorited          bool
}

// takeoutFields are the keys of Google Takeout's per-file JSON; a file
// with any other key is refused.
type takeoutFields struct {
	Title                 *string         `json:"title"`
	Description           *string         `json:"description"`
	ImageViews            *string         `json:"imageViews"`
	CreationTime          json.RawMessage `json:"creationTime"`
	PhotoTakenTime        json.RawMessage `json:"photoTakenTime"`
	PhotoLastModifiedTime json.RawMessage `json:"photoLastModifiedTime"`
	ModificationTime      json.RawMessage `json:"modificationTime"`
	GeoData               json.RawMessage `json:"geoData"`
	GeoDataExif           json.RawMessage `json:"geoDataExif"`
	People                []struct {
		Name string `json:"name"`
	} `json:"people"`
	URL                string          `json:"url"`
	GooglePhotosOrigin json.RawMessage `json:"googlePhotosOrigin"`
	AppSource          json.RawMessage `json:"appSource"`
	Archived           *bool           `json:"archived"`
	Trashed            *bool           `json:"trashed"`
	Favorited          *bool           `json:"favorited"`
}

// DecodeTakeout decodes b strictly as Takeout's per-file JSON: only
// Takeout's keys; title, description, photoTakenTime and geoData present;
// each time an object of exactly a decimal "timestamp" string (seconds) and
// its "formatted" UTC rendering that names the same second; geoData exactly
// its five numbers.
func DecodeTakeout(b []byte) (*Takeout, error) {
	var f takeoutFields
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the object")
	}
	if f.Title == nil || f.Description == nil {
		return nil, errors.New("title or description missing")
	}
	out := &Takeout{Title: *f.Title, Description: *f.Description, Favorited: f.Favorited != nil && *f.Favorited}
	var err error
	if out.Taken, err = takeoutTime(f.PhotoTakenTime); err != nil {
		return nil, fmt.Errorf("photoTakenTime: %w", err)
	}
	for name, raw := range map[string]json.RawMessage{"creationTime": f.CreationTime, "modificationTime": f.ModificationTime,
		"photoLastModifiedTime": f.PhotoLastModifiedTime} {
		if raw == nil {
			continue
		}
		t, err := takeoutTime(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if name == "modificationTime" {
			out.Modified = t
		}
	}
	if out.Lat, out.Lon, err = takeoutGeo(f.GeoData); err != nil {
		return nil, fmt.Errorf("geoData: %w", err)
	}
	if f.GeoDataExif != nil {
		if _, _, err := takeoutGeo(f.GeoDataExif); err != nil {
			return nil, fmt.Errorf("geoDataExif: %w", err)
		}
	}
	return out, nil
}

func takeoutTime(raw json.RawMessage) (time.Time, error) {
	if raw == nil {
		return time.Time{}, errors.New("missing")
	}
	var v struct {
		Timestamp *string `json:"timestamp"`
		Formatted *string `json:"formatted"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return time.Time{}, err
	}
	if v.Timestamp == nil || v.Formatted == nil {
		return time.Time{}, errors.New("timestamp or formatted missing")
	}
	s, err := strconv.ParseInt(*v.Timestamp, 10, 64)
	if err != nil || strconv.FormatInt(s, 10) != *v.Timestamp {
		return time.Time{}, fmt.Errorf("timestamp %q is not whole seconds", *v.Timestamp)
	}
	t := time.Unix(s, 0).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("timestamp %q is in the year %d: milliseconds?", *v.Timestamp, t.Year())
	}
	if f, err := time.Parse("Jan 2, 2006, 3:04:05 PM MST", *v.Formatted); err != nil || !f.Equal(t) || !strings.HasSuffix(*v.Formatted, " UTC") {
		return time.Time{}, fmt.Errorf("formatted %q does not say %s", *v.Formatted, t)
	}
	return t, nil
}

func takeoutGeo(raw json.RawMessage) (lat, lon float64, err error) {
	if raw == nil {
		return 0, 0, errors.New("missing")
	}
	var g map[string]json.RawMessage
	if err := json.Unmarshal(raw, &g); err != nil {
		return 0, 0, err
	}
	want := []string{"latitude", "longitude", "altitude", "latitudeSpan", "longitudeSpan"}
	if len(g) != len(want) {
		return 0, 0, fmt.Errorf("want exactly %v, got %d keys", want, len(g))
	}
	vals := map[string]float64{}
	for _, k := range want {
		var f float64
		if err := json.Unmarshal(g[k], &f); err != nil || g[k] == nil {
			return 0, 0, fmt.Errorf("%s is not a number", k)
		}
		vals[k] = f
	}
	lat, lon = vals["latitude"], vals["longitude"]
	if math.Abs(lat) > 90 || math.Abs(lon) > 180 {
		return 0, 0, fmt.Errorf("(%v, %v) is not on Earth", lat, lon)
	}
	return lat, lon, nil
}
