package takeout

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// nameDate reads a date from a file's name as Ente's uploader does for a
// file with no date of its own: WhatsApp's "IMG-20171218-WA0028.jpg",
// Android's "Screenshot_20181227-152914.jpg", Signal's
// "signal-2024-08-17-21-58-10-982-1.jpg", iOS's "20230427_145116000_iOS.jpg",
// and any name with six groups of digits ("2018-08-19 12:34:45") or eight
// then six ("20180819_123445"). Times are taken in loc; a date before
// 1990, after next year, or after now is no date.
func nameDate(name string, loc *time.Location, now time.Time) (int64, bool) {
	name = strings.TrimSpace(name)
	var t time.Time
	var ok bool
	switch {
	case strings.HasPrefix(name, "IMG-") || strings.HasPrefix(name, "VID-"):
		if p := strings.Split(name, "-"); len(p) > 1 {
			t, ok = fused(p[1], loc, now)
		}
	case strings.HasPrefix(name, "Screenshot_"):
		t, ok = fused(strings.TrimPrefix(name, "Screenshot_"), loc, now)
	case strings.HasPrefix(name, "signal-"):
		p := strings.Split(name, "-")
		at := func(i int) string {
			if i < len(p) {
				return p[i]
			}
			return ""
		}
		if len(p) > 5 {
			t, ok = fused(at(1)+at(2)+at(3)+"-"+at(4)+at(5)+at(6), loc, now)
		} else if len(p) > 1 {
			t, ok = fused(at(1)+at(2)+at(3)+"-"+at(4), loc, now)
		}
	}
	if stem := strings.TrimSuffix(name, path.Ext(name)); !ok && strings.HasSuffix(stem, "_iOS") {
		if p := strings.Split(stem, "_"); len(p) == 3 {
			t, ok = fused(p[0]+"-"+p[1], loc, now)
		}
	}
	if !ok {
		t, ok = digitGroups(name, loc, now)
	}
	if !ok || t.After(now) {
		return 0, false
	}
	return t.UnixMicro(), true
}

var digits = regexp.MustCompile(`\d+`)

// digitGroups takes the first six groups of digits as year, month, day,
// hour, minute and second, or eight and six digits as "YYYYMMDD-HHMMSS".
func digitGroups(s string, loc *time.Location, now time.Time) (time.Time, bool) {
	g := digits.FindAllString(s, 6)
	if len(g) >= 2 && len(g[0]) == 8 && len(g[1]) == 6 {
		return fused(g[0]+"-"+g[1], loc, now)
	}
	n := make([]int, 6)
	known := make([]bool, 6)
	for i := range g {
		n[i], known[i] = atoi(g[i])
	}
	if !known[0] || !known[1] || !known[2] {
		return time.Time{}, false
	}
	return dateFrom(n, known[3] && known[4] && known[5], loc, now)
}

// fused reads "YYYYMMDD-HHMMSS", ignoring what follows; a missing or bad
// time leaves the day.
func fused(s string, loc *time.Location, now time.Time) (time.Time, bool) {
	part := func(i, j int) (int, bool) {
		if j > len(s) {
			return 0, false
		}
		return atoi(s[i:j])
	}
	n := make([]int, 6)
	ok := make([]bool, 6)
	for i, r := range [][2]int{{0, 4}, {4, 6}, {6, 8}, {9, 11}, {11, 13}, {13, 15}} {
		n[i], ok[i] = part(r[0], r[1])
	}
	if !ok[0] || !ok[1] || !ok[2] {
		return time.Time{}, false
	}
	return dateFrom(n, ok[3] && ok[4] && ok[5], loc, now)
}

func atoi(s string) (int, bool) {
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 0
}

// dateFrom makes the date n (year, month, day, hour, minute, second) in
// loc: an impossible time leaves the day, an impossible day is no date.
func dateFrom(n []int, withTime bool, loc *time.Location, now time.Time) (time.Time, bool) {
	if !withTime || n[3] > 23 || n[4] > 59 || n[5] > 59 {
		n[3], n[4], n[5] = 0, 0, 0
	}
	t := time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], 0, loc)
	if t.Year() != n[0] || int(t.Month()) != n[1] || t.Day() != n[2] {
		return time.Time{}, false
	}
	if t.Year() < 1990 || t.Year() > now.Year()+1 {
		return time.Time{}, false
	}
	return t, true
}
