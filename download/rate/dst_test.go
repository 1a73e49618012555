package rate

import (
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin wherever the tests run

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The timetable follows the clock on the wall: a time the clock skips
// starts when it jumps, and an hour the clock repeats is followed twice.
func TestScheduleAcrossClockChanges(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	s := daily(Slot{Hour: 1, Rate: 1 << 20}, Slot{Hour: 2, Minute: 30, Rate: 2 << 20}, Slot{Hour: 4})

	// 28 March 2027: 02:00 CET becomes 03:00 CEST.
	before := time.Date(2027, 3, 28, 1, 59, 0, 0, berlin)
	rate, until := s.At(before)
	assert.Equal(t, int64(1<<20), rate)
	jump := time.Date(2027, 3, 28, 3, 0, 0, 0, berlin)
	assert.True(t, jump.Equal(until), "until %v, want the jump %v", until, jump)
	assert.Equal(t, time.Minute, until.Sub(before))
	rate, until = s.At(jump)
	assert.Equal(t, int64(2<<20), rate)
	assert.True(t, time.Date(2027, 3, 28, 4, 0, 0, 0, berlin).Equal(until))

	// A slot after the change, not in the skipped hour, starts at its own
	// time: from Saturday 13:00 CET to Sunday 08:00 CEST is 18 hours.
	w := Weekly([]Slot{{Day: time.Saturday, Hour: 12, Rate: 1 << 20}, {Day: time.Sunday, Hour: 8, Rate: 2 << 20}})
	sat := time.Date(2027, 3, 27, 13, 0, 0, 0, berlin)
	_, until = w.At(sat)
	assert.Equal(t, 18*time.Hour, until.Sub(sat))

	// 31 October 2027: 03:00 CEST becomes 02:00 CET again.
	first := time.Date(2027, 10, 31, 0, 45, 0, 0, time.UTC).In(berlin) // 02:45 CEST
	rate, _ = s.At(first)
	assert.Equal(t, int64(2<<20), rate)
	second := first.Add(time.Hour) // 02:45 CET
	rate, _ = s.At(second)
	assert.Equal(t, int64(2<<20), rate)
	rate, _ = s.At(second.Add(-30 * time.Minute)) // 02:15 CET: 01:00's rate again
	assert.Equal(t, int64(1<<20), rate)
}
