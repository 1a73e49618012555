package cmd

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError turns an error parsing c's flags into a usage error. A flag c
// does not know comes with the flags it may have meant, as a mistyped
// command does.
func flagError(c *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		return &mistypedError{err: err, near: nearFlags(c.Flags(), ne.GetSpecifiedName())}
	}
	return &usageError{err}
}

// maxFlagDistance is how many letters a mistyped flag may differ by from
// the flag meant, as cobra allows for commands.
const maxFlagDistance = 2

// nearFlags is the flags of fs that name may have meant, nearest first:
// those within maxFlagDistance edits of it, and those it begins (three
// letters or more). Hidden flags are never suggested.
func nearFlags(fs *pflag.FlagSet, name string) []string {
	type near struct {
		name string
		dist int
	}
	var found []near
	typed := strings.ToLower(name)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(typed, f.Name)
		if d <= maxFlagDistance || (len(typed) >= 3 && strings.HasPrefix(f.Name, typed)) {
			found = append(found, near{f.Name, d})
		}
	})
	sort.Slice(found, func(i, j int) bool {
		if found[i].dist != found[j].dist {
			return found[i].dist < found[j].dist
		}
		return found[i].name < found[j].name
	})
	out := make([]string, 0, len(found))
	for _, n := range found {
		out = append(out, "--"+n.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// atLeast refuses an integer flag below lo, naming the flag and its range.
func atLeast(name string, v, lo int) error {
	if v < lo {
		return &usageError{fmt.Errorf("--%s must be at least %d, not %d", name, lo, v)}
	}
	return nil
}

// inRange refuses an integer flag outside lo to hi, naming the flag and
// its range.
func inRange(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return &usageError{fmt.Errorf("--%s must be from %d to %d, not %d", name, lo, hi, v)}
	}
	return nil
}

// firstError is the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
