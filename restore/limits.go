package restore

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// What Ente's apps accept of a file's metadata (docs/restore.md says where
// each bound is in their source): a value beyond these is kept by museum,
// which checks none of it, for good, and shown by no app as it is.
const (
	// maxCaption is the longest caption, in characters, that Ente's web
	// and mobile apps let a person save.
	maxCaption = 5000
	// Latitudes and longitudes Ente's web app takes, bounds included.
	maxLatitude  = 90
	maxLongitude = 180
)

// Dates Ente's apps can show and set: the mobile app's date picker runs
// from 1800 to 2200 (the web app's from 1900 to today).
var (
	earliestDate = time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC)
	latestDate   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// MetadataError reports a value of a file's metadata that Ente's apps
// would refuse: the file is not restored with it.
type MetadataError struct {
	Field string // "caption", "latitude"…
	Value string // the value, or what it is (a caption's length)
	Why   string
}

func (e *MetadataError) Error() string {
	return fmt.Sprintf("its %s (%s) %s, which Ente's apps refuse; quak restores no file with it", e.Field, e.Value, e.Why)
}

// checkMetadata refuses what o would upload that Ente's apps refuse:
// a caption too long, a place off the globe, a date out of their range.
func checkMetadata(o *original) error {
	m := o.rec.Meta
	if n := utf8.RuneCountInString(m.Caption); n > maxCaption {
		return &MetadataError{Field: "caption", Value: fmt.Sprintf("%d characters", n), Why: fmt.Sprintf("is longer than %d characters", maxCaption)}
	}
	if m.Latitude != nil {
		if err := checkDegrees("latitude", *m.Latitude, maxLatitude); err != nil {
			return err
		}
	}
	if m.Longitude != nil {
		if err := checkDegrees("longitude", *m.Longitude, maxLongitude); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		field string
		us    int64
	}{{"creation time", m.CreationTime}, {"modification time", m.ModificationTime}} {
		if d := time.UnixMicro(t.us).UTC(); d.Before(earliestDate) || !d.Before(latestDate) {
			return &MetadataError{Field: t.field, Value: d.Format(time.RFC3339),
				Why: fmt.Sprintf("is not from %d to %d", earliestDate.Year(), latestDate.Year()-1)}
		}
	}
	return nil
}

func checkDegrees(field string, v float64, bound float64) error {
	if math.IsNaN(v) || v < -bound || v > bound {
		return &MetadataError{Field: field, Value: fmt.Sprint(v), Why: fmt.Sprintf("is not from -%g to %g", bound, bound)}
	}
	return nil
}
