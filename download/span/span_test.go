package span

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in     string
		before time.Time
		dur    time.Duration
	}{
		{"30d", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 30 * 24 * time.Hour},
		{"2w", time.Date(2026, 3, 17, 12, 0, 0, 0, time.UTC), 14 * 24 * time.Hour},
		{"36h", time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC), 36 * time.Hour},
		{"1mo", time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC), 30 * 24 * time.Hour}, // Feb 31 is Mar 3, as AddDate counts
		{"6mo", time.Date(2025, 10, 1, 12, 0, 0, 0, time.UTC), 180 * 24 * time.Hour},
		{"1y", time.Date(2025, 3, 31, 12, 0, 0, 0, time.UTC), 365 * 24 * time.Hour},
		{"1h30min", time.Date(2026, 3, 31, 10, 30, 0, 0, time.UTC), 90 * time.Minute},
		{"20s", now.Add(-20 * time.Second), 20 * time.Second},
		{"250ms", now.Add(-250 * time.Millisecond), 250 * time.Millisecond},
		{" 1y2mo3w4d5h6min7s ", time.Date(2025, 1, 6, 6, 53, 53, 0, time.UTC),
			(365+60+25)*24*time.Hour + 5*time.Hour + 6*time.Minute + 7*time.Second},
		{"0d", now, 0},
		{"1d0h", time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC), 24 * time.Hour},
		{"1w9h", time.Date(2026, 3, 24, 3, 0, 0, 0, time.UTC), 7*24*time.Hour + 9*time.Hour},
	} {
		sp, err := Parse(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := sp.Before(now); !got.Equal(c.before) {
			t.Errorf("%q: Before = %v, want %v", c.in, got, c.before)
		}
		if got := sp.Duration(); got != c.dur {
			t.Errorf("%q: Duration = %v, want %v", c.in, got, c.dur)
		}
		if sp.String() != strings.TrimSpace(c.in) {
			t.Errorf("%q: String = %q", c.in, sp.String())
		}
	}
}

func TestParseSaysWhatToWrite(t *testing.T) {
	for in, want := range map[string]string{
		"1m":                    "write 1mo for months or 1min for minutes",
		"2h1m":                  "write 1mo for months or 1min for minutes",
		"30":                    "write 30d",
		"":                      "empty",
		"d":                     "a whole number and a unit",
		"-3d":                   "a whole number and a unit",
		"1.5h":                  "unknown unit",
		"3days":                 "unknown unit",
		"3 d":                   "unknown unit",
		"10000000d":             "too large",
		"99999999999999999999d": "too large",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
}

func TestDurationSaturates(t *testing.T) {
	sp, err := Parse("1000000y")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Duration() <= 0 || sp.Duration() < 200*365*24*time.Hour {
		t.Fatalf("Duration overflowed: %v", sp.Duration())
	}
	if d, _ := Parse("273y"); d.Duration() < 0 {
		t.Fatal("273 years overflowed")
	}
	if d, _ := Parse("100000d"); d.Duration() != 100_000*24*time.Hour {
		t.Fatalf("100000 days saturated: %v", d.Duration())
	}
}

func TestText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		36 * time.Hour:                     "36h",
		48 * time.Hour:                     "2d",
		20 * time.Second:                   "20s",
		90 * time.Minute:                   "1h30min",
		time.Minute + 250*time.Millisecond: "1min250ms",
		0:                                  "0s",
		500 * time.Nanosecond:              "500ns",
	} {
		if got := Text(d); got != want {
			t.Errorf("Text(%v) = %q, want %q", d, got, want)
		}
		if d >= time.Millisecond {
			sp, err := Parse(Text(d))
			if err != nil || sp.Duration() != d {
				t.Errorf("Text(%v) does not read back: %v, %v", d, sp.Duration(), err)
			}
		}
	}
	if Of(36*time.Hour).String() != "36h" {
		t.Fatal("Of")
	}
}
