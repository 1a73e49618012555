package cmd

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/pace"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10M", 10 << 20, true},
		{"10m", 10 << 20, true},
		{"512K", 512 << 10, true},
		{"1.5G", 3 << 29, true},
		{"2048", 2048, true},
		{"10MB", 10 << 20, true},
		{"10M/s", 10 << 20, true},
		{"0", 0, true},
		{"off", 0, true},
		{"Off", 0, true},
		{"12", 0, false},
		{"-1M", 0, false},
		{"fast", 0, false},
		{"10T", 0, false},
		{"NaN", 0, false},
		{"nan", 0, false},
		{"B", 0, false},
		{"/s", 0, false},
		{"", 0, true},
		{"1048576G", 1 << 50, true}, // the largest rate taken: 1 PiB/s
		{"1048577G", 0, false},
		{"1e300", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRate(tc.in)
			if !tc.ok {
				assert.Error(t, err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBwlimitAndStreamsAreFlagsOfBackup(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 1000, Seed: 1})
	if code, _, errOut := e.run("backup", "--bwlimit", "fast", dir); code != exitUsage || !strings.Contains(errOut, "not a rate") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, n := range []string{"0", "17"} {
		if code, _, errOut := e.run("backup", "--streams", n, dir); code != exitUsage || !strings.Contains(errOut, "--streams must be from 1 to 16") {
			t.Fatalf("--streams %s: code %d, stderr %q", n, code, errOut)
		}
	}
	if code, out, errOut := e.run("backup", "--streams", "16", dir); code != exitOK {
		t.Fatalf("--streams 16: code %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := e.run("backup", "--bwlimit", "10M", "--streams", "1", dir); code != exitOK {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
}

func TestParseBwlimitTimetables(t *testing.T) {
	// 2 December 2026 is a Wednesday.
	wed := func(h, m int) time.Time { return time.Date(2026, 12, 2, h, m, 0, 0, time.UTC) }
	day := func(d, h, m int) time.Time { return time.Date(2026, 12, 2+d, h, m, 0, 0, time.UTC) }
	type want struct {
		at   time.Time
		rate int64
	}
	for _, tc := range []struct {
		in    string
		wants []want
	}{
		{"10M", []want{{wed(3, 0), 10 << 20}, {day(4, 23, 59), 10 << 20}}},
		{"off", []want{{wed(3, 0), 0}}},
		{"", []want{{wed(3, 0), 0}}},
		{"08:00,512K 12:00,10M 23:00,off", []want{
			{wed(0, 0), 0}, {wed(7, 59), 0}, {wed(8, 0), 512 << 10}, {wed(11, 59), 512 << 10},
			{wed(12, 0), 10 << 20}, {wed(22, 59), 10 << 20}, {wed(23, 0), 0},
		}},
		{"08:00,512K;23:00,OFF", []want{{wed(8, 0), 512 << 10}, {wed(23, 30), 0}}},
		{"00:00,1M 23:59,off", []want{{wed(0, 0), 1 << 20}, {wed(23, 58), 1 << 20}, {wed(23, 59), 0}}},
		{"08:00,512K\n\t23:00,Off", []want{{wed(8, 0), 512 << 10}, {wed(23, 30), 0}}},
		{"  23:00,off   8:00,1M  ", []want{{wed(7, 0), 0}, {wed(8, 0), 1 << 20}}}, // any order
		{"22:00,1M 06:00,off", []want{{wed(2, 0), 1 << 20}, {wed(6, 0), 0}, {wed(22, 0), 1 << 20}}},
		{"Mon-08:00,2M Fri-18:00,off", []want{
			{wed(3, 0), 2 << 20}, {day(2, 17, 59), 2 << 20}, {day(2, 18, 0), 0}, {day(4, 23, 59), 0}, {day(5, 8, 0), 2 << 20},
		}},
		{"monday-08:00,2M SUNDAY-20:00,off", []want{{day(4, 19, 0), 2 << 20}, {day(4, 20, 0), 0}}},
		// A daily entry is on every day, weekday entries only on theirs.
		{"Sat-10:00,off 12:00,4M", []want{{wed(11, 0), 4 << 20}, {day(3, 11, 0), 0}, {day(3, 12, 0), 4 << 20}}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s, err := parseBwlimit(tc.in)
			require.NoError(t, err)
			for _, w := range tc.wants {
				got, _ := s.At(w.at)
				assert.Equal(t, w.rate, got, "at %s", w.at.Format("Mon 15:04"))
			}
		})
	}
}

// Each refusal names the entry at fault and what is wrong with it.
func TestParseBwlimitRefusals(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"10M 08:00,1M", `entry "10M": no time`},
		{"08:00,1M 23:00", `entry "23:00": no time`},
		{"08:00,1M 25:00,off", `entry "25:00,off": "25:00" is not a time of day`},
		{"08:00,1M 23:60,off", `"23:60" is not a time of day`},
		{"8,1M 23:00,off", `"8" is not a time of day`},
		{"08:0,1M", `"08:0" is not a time of day`},
		{"008:00,1M", `"008:00" is not a time of day`},
		{"+8:00,1M", `"+8:00" is not a time of day`},
		{"0800,1M", `"0800" is not a time of day`},
		{"Mun-08:00,1M", `entry "Mun-08:00,1M": "Mun" is not a day`},
		{"-08:00,1M", `"-08:00" is not a time of day`},
		{"-1:00,1M", `"-1:00" is not a time of day`},
		{"08:00", `entry "08:00": no rate`},
		{"Mon-08:00", `entry "Mon-08:00": no rate`},
		{"08:00, 09:00,1M", `entry "08:00,": no rate`},
		{"08:00,B 09:00,1M", `entry "08:00,B": "B" is not a rate`},
		{"08:00,NaN 09:00,1M", `entry "08:00,NaN": "NaN" is not a rate`},
		{"08:00,fast 23:00,off", `entry "08:00,fast": "fast" is not a rate`},
		{"08:00,12", `entry "08:00,12": "12" is below 1K`},
		{"08:00,1M,2M", `entry "08:00,1M,2M": "1M,2M" is not a rate`},
		{"10M:1M", `"10M:1M" is rclone's UPLOAD:DOWNLOAD pair, and quak only downloads: give one rate (1M here)`},
		{"08:00,512K:10M", `entry "08:00,512K:10M": "512K:10M" is rclone's UPLOAD:DOWNLOAD pair`},
		{"08:00,1M 8:00,2M", `entries "08:00,1M" and "8:00,2M" both start at 08:00`},
		{"Wed-08:00,1M wednesday-08:00,2M", `entries "Wed-08:00,1M" and "wednesday-08:00,2M" both start at Wed 08:00`},
		{"Tue-08:00,1M 08:00,2M", `entries "Tue-08:00,1M" and "08:00,2M" both start at Tue 08:00`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := parseBwlimit(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// quak backup takes a timetable, and refuses a malformed one before it
// starts, naming the entry.
func TestBackupTakesABwlimitTimetable(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	f := u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 1000, Seed: 1})
	code, _, errOut := e.run("backup", "--bwlimit", "08:00,512K 12:00,10M 24:00,off", dir)
	if code != exitUsage || !strings.Contains(errOut, `entry "24:00,off": "24:00" is not a time of day`) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "A", "a.jpg")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused run downloaded: %v", err)
	}
	if code, out, errOut := e.run("backup", "--bwlimit", "00:00,10M 12:00,off;Sat-06:00,20M", dir); code != exitOK {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	got, err := os.ReadFile(filepath.Join(dir, "A", "a.jpg"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(f.Plaintext(), got))
}

// Every request quak may have in flight to one host keeps its connection
// when it ends: the most downloads at once, and two files' ranges at the
// most --streams allows. Fewer, and connections are opened again.
func TestTheTransportKeepsAConnectionForEveryRequestInFlight(t *testing.T) {
	if got, want := baseTransport().MaxIdleConnsPerHost, pace.DefaultMax+download.MultiStreamFiles*16; got < want {
		t.Fatalf("%d idle connections kept per host, want at least %d", got, want)
	}
}
