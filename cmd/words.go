package cmd

import "fmt"

// plural is a count with its noun: "1 file", "0 files", "3 files"; many,
// when given, is the plural of a noun that does not just take an s
// ("hash mismatches"). Every count quak prints in words goes through it.
func plural(n int, noun string, many ...string) string {
	if n == 1 {
		return "1 " + noun
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
