package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quak-photos/quak/download/folder"
)

// `1m` is a minute to Go and a month to restic: quak reads it as neither,
// and says what to write, on every flag that takes a length of time. A
// trash day 11 days old survives `prune-trash --older-than 1m`.
func TestAmbiguousMonthIsRefusedEverywhere(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	day := filepath.Join(folder.At(dir).Trash(), "2026-06-01")
	if err := os.MkdirAll(filepath.Join(day, "A"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.now = func() time.Time { return time.Date(2026, 6, 12, 9, 0, 0, 0, time.UTC) }
	for _, args := range [][]string{
		{"prune-trash", "--older-than", "1m", dir},
		{"backup", "--since", "1m", dir},
		{"backup", "--until", "1m", dir},
		{"status", "--max-age", "1m", dir},
		{"backup", "--request-timeout", "1m", dir},
		{"backup", "--idle-timeout", "1m", dir},
	} {
		code, _, errOut := e.run(args...)
		if code != 64 || !strings.Contains(errOut, "1mo") || !strings.Contains(errOut, "1min") {
			t.Errorf("%v: code %d, %q; want 64 and what to write", args, code, errOut)
		}
	}
	if _, err := os.Stat(day); err != nil {
		t.Fatal("prune-trash deleted a trash day 11 days old on `1m`")
	}
	e.now = func() time.Time { return time.Date(2026, 7, 2, 9, 0, 0, 0, time.UTC) }
	if err := os.WriteFile(filepath.Join(day, "A", "x.jpg"), []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := e.run("prune-trash", "--dry-run", "--older-than", "1mo", dir)
	if code != 0 || !strings.Contains(out, "Would delete the trash of 2026-06-01 (1 file, 3 B)") ||
		!strings.Contains(out, filepath.Join("2026-06-01", "A", "x.jpg")) {
		t.Fatalf("--dry-run: code %d, %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(day, "A", "x.jpg")); err != nil {
		t.Fatal("--dry-run deleted")
	}
	if code, out, errOut := e.run("prune-trash", "--older-than", "1mo", dir); code != 0 || !strings.Contains(out, "2026-06-01") {
		t.Fatalf("--older-than 1mo a month and a day later: code %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := e.run("status", "--offline", "--max-age", "2w", dir); code == 64 {
		t.Fatalf("--max-age 2w refused: %q", errOut)
	}
}
