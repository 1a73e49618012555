package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/quak-photos/quak/download/rate"
)

// bwlimit is --bwlimit: one RATE (bytes a second, with rclone's binary
// suffixes: 10M is 10 MiB/s; 0 or "off" for none), or a timetable of
// rclone's form, "08:00,512K 12:00,10M 23:00,off".
type bwlimit struct {
	text  string
	sched rate.Schedule
}

func (b *bwlimit) String() string {
	if !b.sched.Limits() {
		return "off"
	}
	return b.text
}

func (b *bwlimit) Type() string { return "RATE" }

func (b *bwlimit) Set(s string) error {
	sched, err := parseBwlimit(s)
	if err != nil {
		return err
	}
	*b = bwlimit{text: s, sched: sched}
	return nil
}

// parseBwlimit reads one RATE, or a timetable: entries [DAY-]HH:MM,RATE
// separated by spaces or semicolons. Each entry's rate holds from its
// time (local) until the next entry's, the last one wrapping round to the
// first; an entry without a day is on every day. DAY is Mon to Sun or the
// whole name. Errors name the entry at fault.
func parseBwlimit(s string) (rate.Schedule, error) {
	entries := strings.FieldsFunc(s, func(r rune) bool { return r == ';' || unicode.IsSpace(r) })
	if len(entries) == 1 && !strings.Contains(entries[0], ",") {
		if looksTimed(entries[0]) {
			return rate.Schedule{}, fmt.Errorf("entry %q: no rate: a timetable's entries are HH:MM,RATE, such as 08:00,512K", entries[0])
		}
		n, err := parseDownloadRate(entries[0])
		return rate.Constant(n), err
	}
	var slots []rate.Slot
	type entry struct {
		text  string
		daily bool
	}
	seen := map[[3]int]entry{}
	for _, e := range entries {
		days, hour, minute, r, err := parseEntry(e)
		if err != nil {
			return rate.Schedule{}, fmt.Errorf("entry %q: %w", e, err)
		}
		daily := len(days) > 1
		for _, d := range days {
			k := [3]int{int(d), hour, minute}
			if other, ok := seen[k]; ok {
				when := fmt.Sprintf("%02d:%02d", hour, minute)
				if !daily || !other.daily {
					when = d.String()[:3] + " " + when
				}
				return rate.Schedule{}, fmt.Errorf("entries %q and %q both start at %s", other.text, e, when)
			}
			seen[k] = entry{e, daily}
			slots = append(slots, rate.Slot{Day: d, Hour: hour, Minute: minute, Rate: r})
		}
	}
	return rate.Weekly(slots), nil
}

var everyDay = []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}

// parseEntry reads [DAY-]HH:MM,RATE.
func parseEntry(e string) (days []time.Weekday, hour, minute int, r int64, err error) {
	when, rateText, ok := strings.Cut(e, ",")
	if !ok {
		return nil, 0, 0, 0, fmt.Errorf("no time: a timetable's entries are HH:MM,RATE, such as 08:00,512K")
	}
	if strings.TrimSpace(rateText) == "" {
		return nil, 0, 0, 0, fmt.Errorf("no rate: write HH:MM,RATE, such as 08:00,512K, or 08:00,off")
	}
	days = everyDay
	if day, clock, ok := strings.Cut(when, "-"); ok && day != "" {
		d, err := parseWeekday(day)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		days, when = []time.Weekday{d}, clock
	}
	if hour, minute, err = parseClock(when); err != nil {
		return nil, 0, 0, 0, err
	}
	r, err = parseDownloadRate(rateText)
	return days, hour, minute, r, err
}

// looksTimed reports an entry that is a time of day, with or without its
// day, and no rate: "08:00" or "Mon-08:00".
func looksTimed(e string) bool {
	if day, clock, ok := strings.Cut(e, "-"); ok {
		if _, err := parseWeekday(day); err != nil {
			return false
		}
		e = clock
	}
	_, _, err := parseClock(e)
	return err == nil
}

// parseWeekday reads Mon to Sun, or Monday to Sunday, in any case.
func parseWeekday(s string) (time.Weekday, error) {
	for _, d := range everyDay {
		name := d.String()
		if strings.EqualFold(s, name) || strings.EqualFold(s, name[:3]) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%q is not a day: write Mon, Tue, Wed, Thu, Fri, Sat or Sun", s)
}

// parseClock reads HH:MM (or H:MM) from 00:00 to 23:59.
func parseClock(s string) (hour, minute int, err error) {
	h, m, ok := strings.Cut(s, ":")
	hour, herr := strconv.Atoi(h)
	minute, merr := strconv.Atoi(m)
	if !ok || herr != nil || merr != nil || len(h) < 1 || len(h) > 2 || len(m) != 2 || h[0] == '+' ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 {
		return 0, 0, fmt.Errorf("%q is not a time of day: write HH:MM from 00:00 to 23:59", s)
	}
	return hour, minute, nil
}

// parseDownloadRate is parseRate, refusing rclone's UPLOAD:DOWNLOAD pairs:
// quak only downloads.
func parseDownloadRate(s string) (int64, error) {
	if _, down, ok := strings.Cut(s, ":"); ok {
		return 0, fmt.Errorf("%q is rclone's UPLOAD:DOWNLOAD pair, and quak only downloads: give one rate (%s here)", s, down)
	}
	return parseRate(s)
}

// parseRate reads "10M", "512K", "1.5G", "800" (bytes a second, suffixes
// powers of 1024, an optional trailing "B" or "/s"), "0" or "off".
func parseRate(s string) (int64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	v := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "/s"), "B")
	if strings.EqualFold(v, "off") {
		return 0, nil
	}
	if v == "" {
		return 0, fmt.Errorf("%q is not a rate: write bytes a second such as 10M, 512K or 800", s)
	}
	mult := 1.0
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0) || f*mult > 1<<50 { // !(f >= 0) refuses NaN too
		return 0, fmt.Errorf("%q is not a rate: write bytes a second such as 10M, 512K or 800", s)
	}
	n := int64(f * mult)
	if f > 0 && n < 1024 {
		return 0, fmt.Errorf("%q is below 1K a second", s)
	}
	return n, nil
}
