package rate

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var zone = time.FixedZone("UTC+1", 3600)

// at is a moment of Wednesday 2 December 2026 (or days later) in zone.
func at(day, h, m, s int) time.Time {
	return time.Date(2026, 12, 2+day, h, m, s, 0, zone)
}

// daily repeats slots on every day of the week.
func daily(slots ...Slot) Schedule {
	var all []Slot
	for d := time.Sunday; d <= time.Saturday; d++ {
		for _, s := range slots {
			s.Day = d
			all = append(all, s)
		}
	}
	return Weekly(all)
}

func TestScheduleAtTimesOfDay(t *testing.T) {
	// 08:00,512K 12:00,10M 23:00,off
	s := daily(Slot{Hour: 8, Rate: 512 << 10}, Slot{Hour: 12, Rate: 10 << 20}, Slot{Hour: 23})
	for _, tc := range []struct {
		t     time.Time
		rate  int64
		until time.Time
	}{
		{at(0, 0, 0, 0), 0, at(0, 8, 0, 0)}, // the day before's 23:00 goes on past midnight
		{at(0, 7, 59, 59), 0, at(0, 8, 0, 0)},
		{at(0, 8, 0, 0), 512 << 10, at(0, 12, 0, 0)},
		{at(0, 11, 59, 59), 512 << 10, at(0, 12, 0, 0)},
		{at(0, 12, 0, 0), 10 << 20, at(0, 23, 0, 0)},
		{at(0, 22, 59, 59), 10 << 20, at(0, 23, 0, 0)},
		{at(0, 23, 0, 0), 0, at(1, 8, 0, 0)},
		{at(0, 23, 59, 59), 0, at(1, 8, 0, 0)},
	} {
		t.Run(tc.t.Format("15:04:05"), func(t *testing.T) {
			rate, until := s.At(tc.t)
			assert.Equal(t, tc.rate, rate)
			assert.True(t, tc.until.Equal(until), "until %v, want %v", until, tc.until)
		})
	}
}

func TestScheduleAtDaysOfWeek(t *testing.T) {
	// Mon-08:00,1M Fri-18:00,off Sat-10:00,2M; 2 December 2026 is a Wednesday.
	s := Weekly([]Slot{{Day: time.Saturday, Hour: 10, Rate: 2 << 20}, {Day: time.Monday, Hour: 8, Rate: 1 << 20}, {Day: time.Friday, Hour: 18}})
	for _, tc := range []struct {
		name  string
		t     time.Time
		rate  int64
		until time.Time
	}{
		{"Wed", at(0, 3, 0, 0), 1 << 20, at(2, 18, 0, 0)},
		{"Fri before", at(2, 17, 59, 59), 1 << 20, at(2, 18, 0, 0)},
		{"Fri at", at(2, 18, 0, 0), 0, at(3, 10, 0, 0)},
		{"Sat", at(3, 10, 0, 0), 2 << 20, at(5, 8, 0, 0)},
		{"Sun night", at(4, 23, 59, 59), 2 << 20, at(5, 8, 0, 0)},
		{"Mon before", at(5, 7, 59, 0), 2 << 20, at(5, 8, 0, 0)},
		{"Mon at", at(5, 8, 0, 0), 1 << 20, at(9, 18, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rate, until := s.At(tc.t)
			assert.Equal(t, tc.rate, rate)
			assert.True(t, tc.until.Equal(until), "until %v, want %v", until, tc.until)
		})
	}
}

// The week wraps: a slot on Sunday, the first day, is in force until the
// first slot of the next week.
func TestScheduleWrapsTheWeek(t *testing.T) {
	s := Weekly([]Slot{{Day: time.Sunday, Hour: 1, Rate: 1 << 20}, {Day: time.Saturday, Hour: 22, Rate: 3 << 20}})
	rate, until := s.At(at(4, 0, 30, 0)) // Sunday 00:30: Saturday's slot still
	assert.Equal(t, int64(3<<20), rate)
	assert.True(t, at(4, 1, 0, 0).Equal(until))
	rate, until = s.At(at(4, 1, 0, 0))
	assert.Equal(t, int64(1<<20), rate)
	assert.True(t, at(10, 22, 0, 0).Equal(until))
}

// The clock time is read in the time's own location.
func TestScheduleReadsTheTimesLocation(t *testing.T) {
	s := daily(Slot{Hour: 8, Rate: 1 << 20}, Slot{Hour: 9})
	rate, _ := s.At(time.Date(2026, 12, 2, 7, 30, 0, 0, time.UTC)) // 08:30 in zone
	assert.Zero(t, rate)
	rate, until := s.At(time.Date(2026, 12, 2, 7, 30, 0, 0, time.UTC).In(zone))
	assert.Equal(t, int64(1<<20), rate)
	assert.True(t, at(0, 9, 0, 0).Equal(until))
}

func TestConstantAndZeroSchedules(t *testing.T) {
	for _, tc := range []struct {
		s      Schedule
		rate   int64
		limits bool
	}{
		{Schedule{}, 0, false},
		{Constant(0), 0, false},
		{Constant(10 << 20), 10 << 20, true},
		{daily(Slot{Hour: 8}, Slot{Hour: 9}), 0, false},
		{daily(Slot{Hour: 8}, Slot{Hour: 9, Rate: 1 << 20}), 1 << 20, true}, // 03:00: the day before's 09:00
	} {
		t.Run(fmt.Sprintf("rate=%d,limits=%v", tc.rate, tc.limits), func(t *testing.T) {
			rate, _ := tc.s.At(at(0, 3, 0, 0))
			assert.Equal(t, tc.rate, rate)
			assert.Equal(t, tc.limits, tc.s.Limits())
		})
	}
	_, until := Constant(1 << 20).At(at(0, 3, 0, 0))
	assert.True(t, until.IsZero(), "a constant rate never changes")
}

func TestWeeklyKeepsTheLaterOfTwoSlotsAtOneMinute(t *testing.T) {
	s := Weekly([]Slot{{Day: time.Wednesday, Hour: 8, Rate: 1 << 20}, {Day: time.Wednesday, Hour: 8, Rate: 2 << 20}})
	rate, _ := s.At(at(0, 9, 0, 0))
	assert.Equal(t, int64(2<<20), rate)
}

// Slots all on one day: after the last of them, the first one next week.
func TestScheduleOfOneDayWrapsToTheNextWeek(t *testing.T) {
	s := Weekly([]Slot{{Day: time.Wednesday, Hour: 1, Rate: 1 << 20}, {Day: time.Wednesday, Hour: 22, Rate: 3 << 20}})
	for _, tc := range []struct {
		t     time.Time
		rate  int64
		until time.Time
	}{
		{at(0, 0, 30, 0), 3 << 20, at(0, 1, 0, 0)},
		{at(0, 1, 0, 0), 1 << 20, at(0, 22, 0, 0)},
		{at(0, 23, 0, 0), 3 << 20, at(7, 1, 0, 0)},
		{at(3, 12, 0, 0), 3 << 20, at(7, 1, 0, 0)},
	} {
		t.Run(tc.t.Format("Mon 15:04"), func(t *testing.T) {
			rate, until := s.At(tc.t)
			assert.Equal(t, tc.rate, rate)
			assert.True(t, tc.until.Equal(until), "until %v, want %v", until, tc.until)
		})
	}
}
