// Package span reads the lengths of time quak's flags take ("30d", "2w",
// "36h", "6mo", "1y", "20s"): one syntax for every flag, and no unit that
// could mean two things.
package span

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Span is a length of time: calendar years, months and days, and a clock
// part. The zero Span is no time at all.
type Span struct {
	Years, Months, Days int
	Clock               time.Duration
	text                string
}

// units are the units Parse accepts. A bare "m" is not one: it is a
// minute to Go and a month to restic.
var units = map[string]bool{"ms": true, "s": true, "min": true, "h": true, "d": true, "w": true, "mo": true, "y": true}

// Parse reads one or more <whole number><unit> ("90d", "1h30min"), with
// units ms, s, min, h, d (calendar days), w (7 days), mo (calendar months)
// and y (calendar years). Errors say what to write instead.
func Parse(s string) (Span, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return Span{}, fmt.Errorf("an empty length of time: write, for example, 30d")
	}
	sp := Span{text: in}
	for rest := in; rest != ""; {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return Span{}, fmt.Errorf("%q is not a length of time: write a whole number and a unit, such as 30d, 2w, 12h or 6mo", in)
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n > 1_000_000 {
			return Span{}, fmt.Errorf("%q: %s is too large", in, rest[:i])
		}
		rest = rest[i:]
		j := 0
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		switch {
		case unit == "m":
			return Span{}, fmt.Errorf("%q: m could mean minutes or months: write %dmo for months or %dmin for minutes", in, n, n)
		case unit == "":
			return Span{}, fmt.Errorf("%q has no unit: write %dd for days (units: s, min, h, d, w, mo, y)", in, n)
		case !units[unit]:
			return Span{}, fmt.Errorf("%q: unknown unit %q (units: s, min, h, d, w, mo, y)", in, unit)
		}
		sp.add(n, unit)
	}
	return sp, nil
}

func (sp *Span) add(n int, unit string) {
	switch unit {
	case "ms":
		sp.Clock += time.Duration(n) * time.Millisecond
	case "s":
		sp.Clock += time.Duration(n) * time.Second
	case "min":
		sp.Clock += time.Duration(n) * time.Minute
	case "h":
		sp.Clock += time.Duration(n) * time.Hour
	case "d":
		sp.Days += n
	case "w":
		sp.Days += 7 * n
	case "mo":
		sp.Months += n
	case "y":
		sp.Years += n
	}
}

// Of is a Span of d, written as Go writes durations.
func Of(d time.Duration) Span { return Span{Clock: d, text: Text(d)} }

// Before is t less the span, counting years, months and days on the
// calendar of t's location.
func (sp Span) Before(t time.Time) time.Time {
	return t.AddDate(-sp.Years, -sp.Months, -sp.Days).Add(-sp.Clock)
}

// Duration is the span as a fixed length: a day is 24 hours, a month 30
// days, a year 365 days (for deadlines and ages, where the calendar does
// not matter).
func (sp Span) Duration() time.Duration {
	days := int64(sp.Days) + 30*int64(sp.Months) + 365*int64(sp.Years)
	if days > maxDays {
		return math.MaxInt64 // longer than time.Duration holds: for ever
	}
	return time.Duration(days)*24*time.Hour + sp.Clock
}

// maxDays keeps Duration inside time.Duration's 292 years.
const maxDays = 100_000

// String is the span as it was written (or as Text writes it).
func (sp Span) String() string {
	if sp.text != "" {
		return sp.text
	}
	return Text(sp.Duration())
}

// Text writes d in Parse's syntax: "2d", "36h", "1h30min", "20s", "250ms".
func Text(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	const day = 24 * time.Hour
	if d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	var b strings.Builder
	for _, u := range []struct {
		unit string
		size time.Duration
	}{{"h", time.Hour}, {"min", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}} {
		if n := d / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.unit)
			d -= n * u.size
		}
	}
	if b.Len() == 0 {
		return d.String()
	}
	return b.String()
}
