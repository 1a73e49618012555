// Package filter decides which albums and files a run takes, from the
// user's --albums and --exclude-albums choices.
package filter

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Albums chooses albums by name or id. A pattern of digits only is an
// album id; anything else is a glob (path.Match syntax: *, ?, [...])
// matched against the whole name, ignoring case. With no Include every
// album is taken; Exclude wins over Include.
type Albums struct {
	Include []string
	Exclude []string
}

// Validate reports a malformed glob before any work starts.
func (a Albums) Validate() error {
	for _, p := range append(append([]string{}, a.Include...), a.Exclude...) {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("an empty album pattern")
		}
		if _, err := path.Match(strings.ToLower(p), ""); err != nil {
			return fmt.Errorf("album pattern %q: %w", p, err)
		}
	}
	return nil
}

// Take reports whether the album with id and name is chosen.
func (a Albums) Take(id int64, name string) bool {
	if matchAny(a.Exclude, id, name) {
		return false
	}
	return len(a.Include) == 0 || matchAny(a.Include, id, name)
}

// Empty reports whether a takes every album.
func (a Albums) Empty() bool { return len(a.Include) == 0 && len(a.Exclude) == 0 }

func matchAny(patterns []string, id int64, name string) bool {
	for _, p := range patterns {
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			if n == id {
				return true
			}
			continue
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(name)); ok {
			return true
		}
	}
	return false
}
