package sidecars_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/sidecars/sidecarstest"
)

func f64(v float64) *float64 { return &v }

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("time zone %s: %v", name, err)
	}
	return loc
}

// checkXMP compares what exiftool read with what was written.
func checkXMP(t *testing.T, in sidecars.Info, got sidecarstest.XMP) {
	t.Helper()
	assert.Empty(t, got.Error, "exiftool refused the file")
	assert.Empty(t, got.Warning, "exiftool warned")
	if y := in.Taken.Year(); y >= 1 && y <= 9999 {
		require.True(t, got.HasDate, "no date read back")
		for name, d := range map[string]time.Time{"DateTimeOriginal": got.DateTimeOriginal, "CreateDate": got.CreateDate, "DateCreated": got.DateCreated} {
			assert.True(t, d.Equal(in.Taken), "%s: %s, want the instant %s", name, d, in.Taken)
			_, gotOff := d.Zone()
			_, wantOff := in.Taken.Zone()
			assert.Less(t, math.Abs(float64(gotOff-wantOff)), 60.0, "%s: offset %ds, want %ds", name, gotOff, wantOff)
		}
	} else {
		assert.False(t, got.HasDate, "a date XMP cannot hold was written")
	}
	if in.Lat != nil {
		require.True(t, got.HasGPS, "no location read back")
		assert.InDelta(t, *in.Lat, got.Lat, 1e-7, "latitude")
		assert.InDelta(t, *in.Lon, got.Lon, 1e-7, "longitude")
	} else {
		assert.False(t, got.HasGPS, "a location was written for a file without one")
	}
	assert.Equal(t, in.Title, got.Title, "title")
	assert.Equal(t, in.Caption, got.Description, "caption")
	if in.Favorite {
		assert.Equal(t, "5", got.Rating, "a favourite is rated 5")
	} else {
		assert.Empty(t, got.Rating)
	}
	want := map[string]bool{}
	for _, a := range in.Albums {
		if a != "" {
			want[a] = true
		}
	}
	var wantList []string
	for a := range want {
		wantList = append(wantList, a)
	}
	sort.Strings(wantList)
	gotList := append([]string(nil), got.Subject...)
	sort.Strings(gotList)
	assert.Equal(t, wantList, gotList, "album keywords")
	for i, a := range wantList {
		wantList[i] = strings.ReplaceAll(a, "/", "_")
	}
	sort.Strings(wantList)
	gotList = append([]string(nil), got.TagsList...)
	sort.Strings(gotList)
	assert.Equal(t, wantList, gotList, "album tags")
}

func checkTakeout(t *testing.T, in sidecars.Info, b []byte) {
	t.Helper()
	if y := in.Taken.Year(); y < 1 || y > 9999 {
		return // Takeout has no such dates, and its readers refuse them
	}
	got, err := sidecarstest.DecodeTakeout(b)
	require.NoError(t, err, "%s", b)
	assert.Equal(t, in.Title, got.Title)
	assert.Equal(t, in.Caption, got.Description)
	assert.Equal(t, in.Taken.Truncate(0).Unix(), got.Taken.Unix(), "photoTakenTime is the second the photo was taken in")
	assert.True(t, !got.Taken.After(in.Taken) && in.Taken.Sub(got.Taken) < time.Second, "photoTakenTime %s for %s", got.Taken, in.Taken)
	assert.Equal(t, in.Modified.Unix(), got.Modified.Unix())
	if in.Lat != nil {
		assert.Equal(t, *in.Lat, got.Lat)
		assert.Equal(t, *in.Lon, got.Lon)
	} else {
		assert.Zero(t, got.Lat, "no location is Takeout's (0, 0)")
		assert.Zero(t, got.Lon)
	}
	assert.Equal(t, in.Favorite, got.Favorited)
}

// write puts each info's XMP in a temp folder and returns the paths.
func write(t *testing.T, infos []sidecars.Info) []string {
	t.Helper()
	dir := t.TempDir()
	paths := make([]string, len(infos))
	for i, in := range infos {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%03d.jpg.xmp", i))
		require.NoError(t, os.WriteFile(paths[i], sidecars.XMPPacket(in), 0o644))
	}
	return paths
}

func TestExiftoolReadsBackEachCase(t *testing.T) {
	sidecarstest.RequireExiftool(t)
	paris := zone(t, "Europe/Paris")
	base := time.Date(2024, 6, 1, 12, 30, 45, 123456000, time.FixedZone("", 2*3600))
	cases := map[string]sidecars.Info{
		"everything": {Title: "IMG_0001.jpg", Caption: "Tour Eiffel", Taken: base, Modified: base,
			Lat: f64(48.858370), Lon: f64(2.294481), Favorite: true, Albums: []string{"Paris", "Favorites"}},
		"no location":            {Title: "a.jpg", Taken: base, Modified: base},
		"negative longitude":     {Title: "b.jpg", Taken: base, Modified: base, Lat: f64(40.689247), Lon: f64(-74.044502)},
		"southern hemisphere":    {Title: "c.jpg", Taken: base, Modified: base, Lat: f64(-33.856784), Lon: f64(151.215297)},
		"on the equator":         {Title: "d.jpg", Taken: base, Modified: base, Lat: f64(0), Lon: f64(-78.455833)},
		"a hair from 0,0":        {Title: "e.jpg", Taken: base, Modified: base, Lat: f64(-0.000001), Lon: f64(0.000001)},
		"a minute that rounds":   {Title: "f.jpg", Taken: base, Modified: base, Lat: f64(10.9999999999), Lon: f64(-0.99999999999)},
		"poles and date line":    {Title: "g.jpg", Taken: base, Modified: base, Lat: f64(-90), Lon: f64(180)},
		"caption with markup":    {Title: `<x>&"'.jpg`, Caption: "line 1\nline 2\r\n\ttabbed <b>bold</b> & \"quoted\" 'single' ]]> <!-- -->", Taken: base, Modified: base},
		"caption with spaces":    {Title: " spaced .jpg", Caption: "  leading and trailing  ", Taken: base, Modified: base},
		"caption of digits":      {Title: "1e5", Caption: "007", Taken: base, Modified: base, Albums: []string{"42"}},
		"before 1970":            {Title: "h.jpg", Taken: time.Date(1931, 7, 14, 8, 0, 0, 0, time.UTC), Modified: base},
		"before 1970, fraction":  {Title: "i.jpg", Taken: time.UnixMicro(-1_500_001).In(time.FixedZone("", -3*3600-1800)), Modified: base},
		"local mean time offset": {Title: "j.jpg", Taken: time.Date(1890, 3, 1, 10, 0, 0, 0, paris), Modified: base},
		"utc":                    {Title: "k.jpg", Taken: base.UTC(), Modified: base},
		"unicode and album marks": {Title: "Ünïcödé 写真 🎉.jpg", Caption: "写真 🎉", Taken: base, Modified: base,
			Albums: []string{"Holidays & <Friends>", "Holidays & <Friends>", "", "Ünï"}},
		"year 10000":  {Title: "l.jpg", Taken: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Modified: base},
		"year 9999":   {Title: "l2.jpg", Taken: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), Modified: base},
		"year 1":      {Title: "l3.jpg", Taken: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), Modified: base},
		"year 0":      {Title: "m.jpg", Taken: time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC), Modified: base},
		"empty title": {Taken: base, Modified: base},
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	infos := make([]sidecars.Info, len(names))
	for i, n := range names {
		infos[i] = cases[n]
	}
	got := sidecarstest.ReadXMP(t, write(t, infos)...)
	for i, n := range names {
		t.Run(n, func(t *testing.T) {
			checkXMP(t, infos[i], got[i])
			checkTakeout(t, infos[i], sidecars.TakeoutJSON(infos[i]))
		})
	}
}

func TestCharactersXMLCannotHoldAreReplaced(t *testing.T) {
	in := sidecars.Info{Title: "a\x01b.jpg", Caption: "bell\x07 nul\x00 fffe\uFFFE end", Taken: time.Unix(0, 0).UTC()}
	got := sidecarstest.ReadXMP(t, write(t, []sidecars.Info{in})...)[0]
	assert.Empty(t, got.Error)
	assert.Equal(t, "a\uFFFDb.jpg", got.Title)
	assert.Equal(t, "bell\uFFFD nul\uFFFD fffe\uFFFD end", got.Description)
}

// randomInfo draws one combination of what Ente allows a file to carry.
func randomInfo(r *rand.Rand, zones []*time.Location) sidecars.Info {
	pieces := []string{"IMG", "_", "0001", " ", "<", ">", "&", `"`, "'", "写真", "🎉", "é", ".", "\t", "]]>", "x", "/"}
	pick := func(n int, extra ...string) string {
		all := append(append([]string{}, pieces...), extra...)
		var b strings.Builder
		for range n {
			b.WriteString(all[r.IntN(len(all))])
		}
		return b.String()
	}
	in := sidecars.Info{Title: pick(1+r.IntN(6)) + ".jpg"}
	if r.IntN(2) == 0 {
		in.Caption = pick(r.IntN(12), "\n", "\r\n", "  ")
	}
	// From 1800 to 2100, to the microsecond.
	us := r.Int64N(9_467_280_000_000_000) - 5_364_662_400_000_000
	in.Taken = time.UnixMicro(us).In(zones[r.IntN(len(zones))])
	in.Modified = time.UnixMicro(r.Int64N(4_000_000_000_000_000))
	switch r.IntN(4) {
	case 0: // no location
	case 1:
		in.Lat, in.Lon = f64(r.Float64()*180-90), f64(r.Float64()*360-180)
	case 2: // one coordinate 0, the other negative
		in.Lat, in.Lon = f64(0), f64(-r.Float64()*180)
	case 3: // tiny values, of either sign
		in.Lat, in.Lon = f64((r.Float64()-0.5)*1e-5), f64((r.Float64()-0.5)*1e-5)
	}
	in.Favorite = r.IntN(3) == 0
	for range r.IntN(4) {
		in.Albums = append(in.Albums, pick(1+r.IntN(3)))
	}
	return in
}

func TestEveryCombinationRoundTrips(t *testing.T) {
	sidecarstest.RequireExiftool(t)
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -3*3600-1800),
		zone(t, "Europe/Paris"), zone(t, "America/St_Johns"), zone(t, "Asia/Kathmandu"), zone(t, "Pacific/Kiritimati")}
	r := rand.New(rand.NewPCG(18, 1))
	infos := make([]sidecars.Info, 300)
	for i := range infos {
		infos[i] = randomInfo(r, zones)
	}
	got := sidecarstest.ReadXMP(t, write(t, infos)...)
	for i := range infos {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkXMP(t, infos[i], got[i])
			checkTakeout(t, infos[i], sidecars.TakeoutJSON(infos[i]))
		})
	}
}

func TestTheStrictDecoderRefusesWhatTakeoutNeverWrites(t *testing.T) {
	good := string(sidecars.TakeoutJSON(sidecars.Info{Title: "a.jpg", Taken: time.Unix(1600000000, 0), Modified: time.Unix(1600000000, 0)}))
	_, err := sidecarstest.DecodeTakeout([]byte(good))
	require.NoError(t, err)
	for name, bad := range map[string]string{
		"unknown key":          strings.Replace(good, `"title"`, `"tittle"`, 1),
		"timestamp a number":   strings.Replace(good, `"timestamp": "1600000000"`, `"timestamp": 1600000000`, 1),
		"timestamp in ms":      strings.Replace(good, `"timestamp": "1600000000"`, `"timestamp": "1600000000000"`, 1),
		"no geoData":           `{"title": "a", "description": "", "photoTakenTime": {"timestamp": "0", "formatted": "Jan 1, 1970, 12:00:00 AM UTC"}}`,
		"geoData short":        strings.Replace(good, `"latitudeSpan": 0,`, ``, 1),
		"no description":       strings.Replace(good, `"description": "",`, ``, 1),
		"formatted elsewhere":  strings.Replace(good, "12:26:40 PM UTC", "2:26:40 PM UTC", 1),
		"formatted not in UTC": strings.Replace(good, "12:26:40 PM UTC", "12:26:40 PM CET", 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, good, bad, "the case did not change the file")
			_, err := sidecarstest.DecodeTakeout([]byte(bad))
			assert.Error(t, err)
		})
	}
}

func TestTakeoutNamesFitAndAreRecognised(t *testing.T) {
	for _, n := range []int{5, 200, 228, 229, 230, 249, 250} {
		name := strings.Repeat("x", n-4) + ".jpg"
		tn := sidecars.TakeoutName(name)
		assert.LessOrEqual(t, len(tn), 255, "len %d", n)
		assert.True(t, strings.HasPrefix(tn, name+"."), "%s keeps the file's name", tn)
		assert.True(t, strings.HasSuffix(tn, ".json"))
		assert.True(t, sidecars.IsOwn(tn, map[string]bool{name: true}), "%s", tn)
		assert.False(t, sidecars.IsOwn(tn, map[string]bool{"other.jpg": true}))
		assert.LessOrEqual(t, len(sidecars.XMPName(name)), 255)
	}
	assert.Equal(t, "IMG_0001.jpg.supplemental-metadata.json", sidecars.TakeoutName("IMG_0001.jpg"))
	assert.Equal(t, strings.Repeat("y", 250)+".json", sidecars.TakeoutName(strings.Repeat("y", 250)))
	assert.Equal(t, strings.Repeat("y", 249)+"..json", sidecars.TakeoutName(strings.Repeat("y", 249)))
	parts := map[string]bool{"a.jpg": true}
	for name, own := range map[string]bool{
		"a.jpg.xmp": true, "a.jpg.supplemental-metadata.json": true, "metadata.json": true,
		"a.jpg.json": false, "b.jpg.xmp": false, "a.jpg.supplemental-me.json": false, "a.jpg": false, "a.xmp": false,
	} {
		assert.Equal(t, own, sidecars.IsOwn(name, parts), name)
	}
}

func TestPartTitles(t *testing.T) {
	assert.Equal(t, "IMG_0001.HEIC", sidecars.PartTitle("IMG_0001.HEIC", "IMG_0001.heic", 1))
	assert.Equal(t, "IMG_0001.mov", sidecars.PartTitle("IMG_0001.HEIC", "IMG_0001_1.mov", 2))
}

func TestStyles(t *testing.T) {
	for in, want := range map[string]sidecars.Style{"ente": sidecars.Ente, "Takeout": sidecars.Takeout, " none ": sidecars.None} {
		got, err := sidecars.ParseStyle(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := sidecars.ParseStyle("google")
	assert.Error(t, err)
}

func TestDateFormats(t *testing.T) {
	at := time.Date(2024, 6, 1, 0, 30, 0, 0, time.FixedZone("", 2*3600))
	for format, want := range map[string]string{
		"YYYY/MM":         "2024/06",
		"YYYY/MM/DD":      "2024/06/01",
		"YYYY-MM":         "2024-06",
		"YYYY/YYYY-MM-DD": "2024/2024-06-01",
		"YYYY_MM DD":      "2024_06 01",
	} {
		f, err := sidecars.ParseDateFormat(format)
		require.NoError(t, err, format)
		assert.Equal(t, filepath.FromSlash(want), f.Folder(at), format)
	}
	f, _ := sidecars.ParseDateFormat("YYYY/MM/DD")
	assert.Equal(t, filepath.FromSlash("2024/05/31"), f.Folder(at.UTC()), "the folder follows the time's own zone")
	assert.Equal(t, filepath.FromSlash("1899/12/31"), f.Folder(time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)))
	for _, bad := range []string{"", "YYYY/MM/DD/DD", "YYYY/../MM", "YYYY/.", "/YYYY", "YYYY/", "YYYY//MM", "%Y/%m",
		"YYYY/MM.", "hello", "YYYY/ MM", "YYYY/MM ", "--"} {
		_, err := sidecars.ParseDateFormat(bad)
		assert.Error(t, err, "%q", bad)
	}
}
