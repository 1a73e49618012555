package rate

import (
	"sort"
	"time"
)

// Slot is one entry of a Schedule: from Hour:Minute of Day on, in the
// local time of the clock asked, the limit is Rate bytes a second (0:
// none), until the next slot of the week.
type Slot struct {
	Day          time.Weekday
	Hour, Minute int
	Rate         int64
}

func (s Slot) weekMinute() int { return int(s.Day)*24*60 + s.Hour*60 + s.Minute }

// Schedule is a week of rates, slot after slot, the last one lasting
// until the first one comes round again. The zero Schedule limits nothing.
type Schedule struct {
	slots []Slot // by weekMinute, none at the same minute
}

// Constant is the schedule of one rate at every moment (0: none).
func Constant(bytesPerSec int64) Schedule {
	return Weekly([]Slot{{Rate: bytesPerSec}})
}

// Weekly is the schedule of slots, given in any order. Of two slots at
// the same minute of the week, the one given later counts.
func Weekly(slots []Slot) Schedule {
	s := append([]Slot(nil), slots...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].weekMinute() < s[j].weekMinute() })
	out := s[:0]
	for _, sl := range s {
		if len(out) > 0 && out[len(out)-1].weekMinute() == sl.weekMinute() {
			out[len(out)-1] = sl
			continue
		}
		out = append(out, sl)
	}
	return Schedule{slots: out}
}

// Limits reports whether some moment of the week has a limit.
func (s Schedule) Limits() bool {
	for _, sl := range s.slots {
		if sl.Rate > 0 {
			return true
		}
	}
	return false
}

// At returns the rate at t (0: none), read from t's clock time in t's
// location, and the moment the next slot starts (zero when the rate
// never changes).
func (s Schedule) At(t time.Time) (bytesPerSec int64, until time.Time) {
	n := len(s.slots)
	if n == 0 {
		return 0, time.Time{}
	}
	wm := int(t.Weekday())*24*60 + t.Hour()*60 + t.Minute()
	i := sort.Search(n, func(i int) bool { return s.slots[i].weekMinute() > wm })
	cur := s.slots[(i+n-1)%n]
	if n == 1 {
		return cur.Rate, time.Time{}
	}
	return cur.Rate, nextStart(t, s.slots[i%n])
}

// nextStart is the first start of sl after t. A slot at a time the clock
// skips (summer time) starts when the clock jumps over it.
func nextStart(t time.Time, sl Slot) time.Time {
	days := int(sl.Day) - int(t.Weekday())
	y, m, d := t.Date()
	next := time.Date(y, m, d+days, sl.Hour, sl.Minute, 0, 0, t.Location())
	if !next.After(t) {
		next = time.Date(y, m, d+days+7, sl.Hour, sl.Minute, 0, 0, t.Location())
	}
	if next.Hour() != sl.Hour || next.Minute() != sl.Minute {
		if jump, _ := next.ZoneBounds(); jump.After(t) {
			next = jump
		}
	}
	return next
}
