package takeout

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func photoOf(name string, size int64, date int64, withJSON bool) *photo {
	p := &photo{e: &entry{base: name, size: size}}
	if date != 0 {
		p.date = &date
	}
	if withJSON {
		p.m = &match{doc: &jsonDoc{photo: &photoMeta{}}}
	}
	return p
}

// Ente's rules for a live photo's halves: one name (Google's video
// extension inside the image's name, "_3" and "_HVEC" aside), each half at
// most 20 MiB, dated within a day unless only one has a JSON.
func TestLivePairRules(t *testing.T) {
	day := int64(liveDay)
	cases := []struct {
		name     string
		img, vid *photo
		want     bool
	}{
		{"same name, image with JSON", photoOf("A.HEIC", 1, 0, true), photoOf("A.MOV", 1, 0, false), true},
		{"neither has JSON nor a date", photoOf("A.HEIC", 1, 0, false), photoOf("A.MOV", 1, 0, false), false},
		{"both JSON, dates far apart", photoOf("A.HEIC", 1, 1, true), photoOf("A.MOV", 1, 1+day, true), false},
		{"both JSON, dates close", photoOf("A.HEIC", 1, 1, true), photoOf("A.MOV", 1, day, true), true},
		{"at 20 MiB", photoOf("A.HEIC", maxLivePart, 0, true), photoOf("A.MOV", maxLivePart, 0, false), true},
		{"image over 20 MiB", photoOf("A.HEIC", maxLivePart+1, 0, true), photoOf("A.MOV", 1, 0, false), false},
		{"video over 20 MiB", photoOf("A.HEIC", 1, 0, true), photoOf("A.MOV", maxLivePart+1, 0, false), false},
		{"video's extension in the image's name", photoOf("IMG_1.mp4.jpg", 1, 0, true), photoOf("IMG_1.mp4", 1, 0, false), true},
		{"_3 on the image", photoOf("IMG_A_3.jpg", 1, 0, true), photoOf("IMG_A.mp4", 1, 0, false), true},
		{"_HVEC on the video", photoOf("IMG_4.jpg", 1, 0, true), photoOf("IMG_4_HVEC.mov", 1, 0, false), true},
		{"other names", photoOf("IMG_5.jpg", 1, 0, true), photoOf("IMG_6.mp4", 1, 0, false), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pairs := pairLive([]*photo{c.img, c.vid})
			assert.Equal(t, c.want, len(pairs) == 1)
		})
	}
	// An image with two videos of its name gets neither.
	assert.Empty(t, pairLive([]*photo{photoOf("B.jpg", 1, 0, true), photoOf("B.mp4", 1, 0, false), photoOf("B.mov", 1, 0, false)}))
}

func TestJSONValuesOutOfRangeAreNone(t *testing.T) {
	meta := func(extra string) *photoMeta {
		p, _, err := parseMeta([]byte(`{"title": "a.jpg", "photoTakenTime": {"timestamp": "1"}` + extra + `}`))
		assert.NoError(t, err)
		return p
	}
	assert.Nil(t, meta(`, "geoData": {"latitude": 91, "longitude": 2}`).lat, "latitude beyond 90")
	assert.Nil(t, meta(`, "geoData": {"latitude": 1, "longitude": -181}`).lat, "longitude beyond 180")
	assert.NotNil(t, meta(`, "geoData": {"latitude": 90, "longitude": -180}`).lat, "the poles and the date line are places")
	ts := func(v string) int64 { return (&gTime{Timestamp: json.RawMessage(v)}).micros() }
	assert.Equal(t, int64(253402300799_000_000), ts(`"253402300799"`), "the last second of 9999")
	assert.Zero(t, ts(`"253402300800"`), "beyond 9999")
	assert.Equal(t, int64(-62135596800_000_000), ts(`"-62135596800"`), "the first second of year 1")
	assert.Zero(t, ts(`"-62135596801"`))
	assert.Equal(t, int64(1_600_000_000_000_000), ts(`1600000000.9`), "a number, as Ente's own exports write it")
	assert.Zero(t, ts(`"0"`), "Google's unknown time")
	assert.Zero(t, ts(`"soon"`))
	assert.Equal(t, strings.Repeat("x", 256), cleanAlbumName(strings.Repeat("x", 300)), "an album's name is cut at 256 bytes")
	assert.Equal(t, strings.Repeat("x", 256), cleanAlbumName(strings.Repeat("x", 256)))
	assert.Equal(t, "x"+strings.Repeat("é", 127), cleanAlbumName("x"+strings.Repeat("é", 200)), "never inside a character")
}
