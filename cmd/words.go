package cmd

import "strconv"

// plural is a count with its noun: "1 file", "0 files", "3 files"; many,
// when given, is the plural of a noun that does not just take an s
// ("hash mismatches"). Every count quak prints in words goes through it.
func plural(n int, noun string, many ...string) string {
	if n == 1 {
		return "1 " + noun
	}
	if len(many) > 0 {
		return counted(n) + " " + many[0]
	}
	return counted(n) + " " + noun + "s"
}

// counted is n with its thousands apart: 12,405.
func counted(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ofFiles is "3 of 12 files": the noun agrees with all, "1 of 1 file".
func ofFiles(done, all int) string {
	return counted(done) + " of " + plural(all, "file")
}

// agreeing is the form of a verb that agrees with a count of n: one for 1,
// many for any other ("1 file gets", "3 files get").
func agreeing(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
