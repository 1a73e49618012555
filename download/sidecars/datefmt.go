package sidecars

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// DateFormat names the folders of the date view: "/"-separated levels made
// of the tokens YYYY, MM and DD and the characters "-", "_" and " ", such
// as "YYYY/MM" or "YYYY/YYYY-MM-DD".
type DateFormat string

// maxLevels bounds how deep the date view goes.
const maxLevels = 3

// ParseDateFormat checks a --date-view value.
func ParseDateFormat(s string) (DateFormat, error) {
	levels := strings.Split(s, "/")
	if s == "" || len(levels) > maxLevels {
		return "", fmt.Errorf("date view %q: give 1 to %d levels separated by /, such as YYYY/MM", s, maxLevels)
	}
	for _, level := range levels {
		tokens := 0
		for rest := level; rest != ""; {
			switch {
			case strings.HasPrefix(rest, "YYYY"):
				rest, tokens = rest[4:], tokens+1
			case strings.HasPrefix(rest, "MM"), strings.HasPrefix(rest, "DD"):
				rest, tokens = rest[2:], tokens+1
			case strings.ContainsRune("-_ ", rune(rest[0])):
				rest = rest[1:]
			default:
				return "", fmt.Errorf("date view %q: %q is not YYYY, MM, DD, -, _ or a space", s, rest)
			}
		}
		if tokens == 0 {
			return "", fmt.Errorf("date view %q: every level needs YYYY, MM or DD", s)
		}
		if strings.TrimSpace(level) != level {
			return "", fmt.Errorf("date view %q: a level cannot start or end with a space", s)
		}
	}
	return DateFormat(s), nil
}

// Folder is the folder, relative to the date view, of a file taken at t
// (in t's own zone). Years outside 0 to 9999 are written with as many
// digits as they need, and a sign for years before 0.
func (f DateFormat) Folder(t time.Time) string {
	r := strings.NewReplacer(
		"YYYY", fmt.Sprintf("%04d", t.Year()),
		"MM", fmt.Sprintf("%02d", int(t.Month())),
		"DD", fmt.Sprintf("%02d", t.Day()),
	)
	levels := strings.Split(string(f), "/")
	for i, level := range levels {
		levels[i] = r.Replace(level)
	}
	return filepath.Join(levels...)
}
