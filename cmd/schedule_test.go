package cmd

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNextStart(t *testing.T) {
	t0 := time.Date(2026, time.December, 1, 3, 0, 0, 0, time.UTC)
	const h = time.Hour
	for _, c := range []struct {
		name      string
		ran       time.Duration
		every     time.Duration
		tempFails int
		jitter    float64
		want      time.Duration // after the run's start
	}{
		{"every after the start, not the end", 10 * time.Minute, 6 * h, 0, 0, 6 * h},
		{"jitter adds up to a tenth", time.Minute, 30 * time.Minute, 0, 0.5, 31*time.Minute + 30*time.Second},
		{"jitter adds at most 5 minutes", time.Minute, 24 * h, 0, 0.5, 24*h + 150*time.Second},
		{"a run longer than every is followed at once", 7 * h, 6 * h, 0, 0.9, 7 * h},
		{"a run ending just at its next start", 6 * h, 6 * h, 0, 0, 6 * h},
		{"first 75: a minute", 5 * time.Second, 6 * h, 1, 0, time.Minute},
		{"second 75 in a row: two", 5 * time.Second, 6 * h, 2, 0, 2 * time.Minute},
		{"third: four", 5 * time.Second, 6 * h, 3, 0, 4 * time.Minute},
		{"ninth: 256 minutes", 5 * time.Second, 6 * h, 9, 0, 256 * time.Minute},
		{"tenth: no later than every", 5 * time.Second, 6 * h, 10, 0, 6 * h},
		{"many in a row never overflow", 5 * time.Second, 48 * h, 1000, 0, 17*h + 4*time.Minute},
		{"75 with jitter", 5 * time.Second, 6 * h, 1, 0.5, time.Minute + 3*time.Second},
		{"every shorter than the retry", time.Second, 5 * time.Second, 1, 0, 5 * time.Second},
		{"jitter never overflows", time.Second, math.MaxInt64, 0, 0.99, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := nextStart(t0, t0.Add(c.ran), c.every, c.tempFails, c.jitter)
			assert.Equal(t, c.want, got.Sub(t0))
		})
	}
}

func TestOutcomeTexts(t *testing.T) {
	for _, c := range []struct {
		oc    outcome
		title string
		typ   string
	}{
		{outcome{Event: eventStart, Code: -1, Folder: "/b", Host: "nas"}, "quak on nas: backup of /b started", "info"},
		{outcome{Event: eventSuccess, Outcome: "ok", Folder: "/b", Host: "nas"}, "quak on nas: backup of /b ok", "success"},
		{outcome{Event: eventFailure, Outcome: "partial", Code: 2, Folder: "/b"}, "quak on this machine: backup of /b PARTIAL (exit code 2)", "warning"},
		{outcome{Event: eventFailure, Outcome: "failed", Code: 75, Folder: "/b", Host: "h"}, "quak on h: backup of /b FAILED (exit code 75)", "failure"},
		{outcome{Event: eventFailure, Outcome: "interrupted", Code: 143, Folder: "/b", Host: "h"}, "quak on h: backup of /b INTERRUPTED (exit code 143)", "failure"},
		{outcome{Event: eventSuccess, Outcome: "ok", All: true, Folders: make([]folderOutcome, 1), Host: "h"}, "quak on h: backup of 1 folder ok", "success"},
	} {
		assert.Equal(t, c.title, c.oc.title())
		assert.Equal(t, c.typ, appriseType(c.oc), c.title)
	}
	assert.Equal(t, "a; b c", oneLine("a\nb   c\n"))
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 8}
	_, _ = b.Write([]byte("0123456789\nlast"))
	assert.Equal(t, ": last", b.lastLine())
	assert.Equal(t, "789\nlast", string(b.b))
	assert.Equal(t, "", (&tailBuffer{max: 8}).lastLine())
	_, _ = b.Write([]byte("\n  \n"))
	assert.Equal(t, ": last", b.lastLine(), "trailing blank lines are not the last line")
}
