package restore

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/state"
)

func TestCheckMetadataKeepsToWhatEntesAppsTake(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	us := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC).UnixMicro()
	}
	ok := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	for _, tc := range []struct {
		name  string
		meta  catalog.Meta
		field string // "" when taken
	}{
		{"plain", catalog.Meta{CreationTime: ok, ModificationTime: ok}, ""},
		{"caption=5000", catalog.Meta{Caption: strings.Repeat("é", 5000), CreationTime: ok, ModificationTime: ok}, ""},
		{"caption=5001", catalog.Meta{Caption: strings.Repeat("é", 5001), CreationTime: ok, ModificationTime: ok}, "caption"},
		{"caption=10MiB", catalog.Meta{Caption: strings.Repeat("x", 10<<20), CreationTime: ok, ModificationTime: ok}, "caption"},
		{"lat=90", catalog.Meta{Latitude: f(90), Longitude: f(0), CreationTime: ok, ModificationTime: ok}, ""},
		{"lat=-90", catalog.Meta{Latitude: f(-90), Longitude: f(0), CreationTime: ok, ModificationTime: ok}, ""},
		{"lat=90.000001", catalog.Meta{Latitude: f(90.000001), Longitude: f(0), CreationTime: ok, ModificationTime: ok}, "latitude"},
		{"lat=-90.000001", catalog.Meta{Latitude: f(-90.000001), Longitude: f(0), CreationTime: ok, ModificationTime: ok}, "latitude"},
		{"lat=999", catalog.Meta{Latitude: f(999), Longitude: f(0), CreationTime: ok, ModificationTime: ok}, "latitude"},
		{"lat=NaN", catalog.Meta{Latitude: f(math.NaN()), Longitude: f(0), CreationTime: ok, ModificationTime: ok}, "latitude"},
		{"lon=180", catalog.Meta{Latitude: f(0), Longitude: f(180), CreationTime: ok, ModificationTime: ok}, ""},
		{"lon=-180", catalog.Meta{Latitude: f(0), Longitude: f(-180), CreationTime: ok, ModificationTime: ok}, ""},
		{"lon=180.000001", catalog.Meta{Latitude: f(0), Longitude: f(180.000001), CreationTime: ok, ModificationTime: ok}, "longitude"},
		{"lon=-180.000001", catalog.Meta{Latitude: f(0), Longitude: f(-180.000001), CreationTime: ok, ModificationTime: ok}, "longitude"},
		{"lon=-1e308", catalog.Meta{Latitude: f(0), Longitude: f(-1e308), CreationTime: ok, ModificationTime: ok}, "longitude"},
		{"lon=NaN", catalog.Meta{Latitude: f(0), Longitude: f(math.NaN()), CreationTime: ok, ModificationTime: ok}, "longitude"},
		{"created=1800", catalog.Meta{CreationTime: us(1800, 1, 1, 0, 0, 0, 0), ModificationTime: ok}, ""},
		{"created<1800", catalog.Meta{CreationTime: us(1799, 12, 31, 23, 59, 59, 999999000), ModificationTime: ok}, "creation time"},
		{"created<2200", catalog.Meta{CreationTime: us(2199, 12, 31, 23, 59, 59, 999999000), ModificationTime: ok}, ""},
		{"created=2200", catalog.Meta{CreationTime: us(2200, 1, 1, 0, 0, 0, 0), ModificationTime: ok}, "creation time"},
		{"created=year1", catalog.Meta{CreationTime: us(1, 1, 1, 0, 0, 0, 0), ModificationTime: ok}, "creation time"},
		{"created=9999", catalog.Meta{CreationTime: us(9999, 12, 31, 0, 0, 0, 0), ModificationTime: ok}, "creation time"},
		{"modified=year1", catalog.Meta{CreationTime: ok, ModificationTime: us(1, 1, 1, 0, 0, 0, 0)}, "modification time"},
		{"modified=2200", catalog.Meta{CreationTime: ok, ModificationTime: us(2200, 1, 1, 0, 0, 0, 0)}, "modification time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMetadata(&original{rec: &state.File{Meta: tc.meta}})
			if tc.field == "" {
				assert.NoError(t, err)
				return
			}
			var me *MetadataError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tc.field, me.Field)
		})
	}
}

// Values Ente's apps would refuse fail their files by name, in the dry
// run as in the real one, and the others are restored.
func TestMetadataEntesAppsRefuseFailsItsFileByName(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "long.jpg", Data: enteapitest.FakeJPEG("long"), Caption: strings.Repeat("x", maxCaption+1)})
	trip.AddFile(enteapitest.FileSpec{Title: "far.jpg", Data: enteapitest.FakeJPEG("far"), Latitude: 999, Longitude: 1})
	trip.AddFile(enteapitest.FileSpec{Title: "old.jpg", Data: enteapitest.FakeJPEG("old"), CreationTime: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()})
	trip.AddFile(enteapitest.FileSpec{Title: "fine.jpg", Data: enteapitest.FakeJPEG("fine")})
	e.backup(e.src, e.dir)
	for _, dry := range []bool{true, false} {
		o := e.options()
		o.DryRun = dry
		sum, err := e.restoreWith(o)
		require.NoError(t, err)
		assert.Equal(t, 1, sum.Uploaded, "dry run %v", dry)
		why := map[string]string{}
		for _, f := range sum.Failures {
			why[f.Title] = f.Error
		}
		assert.Contains(t, why["long.jpg"], "its caption (5001 characters) is longer than 5000 characters, which Ente's apps refuse")
		assert.Contains(t, why["far.jpg"], "its latitude (999) is not from -90 to 90")
		assert.Contains(t, why["old.jpg"], "its creation time (0001-01-01T00:00:00Z) is not from 1800 to 2199")
	}
	assert.Equal(t, 1, e.s.Requests("POST /files"), "only the file Ente's apps can show is sent")
}
