// Package filter decides which albums and files a run takes, from the
// user's --albums and --exclude-albums choices.
package filter

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/span"
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

// Unmatched returns the Include patterns that match none of the albums
// (id → name): a typo that would otherwise save nothing, run after run.
func (a Albums) Unmatched(albums map[int64]string) []string {
	var out []string
	for _, p := range a.Include {
		found := false
		for id, name := range albums {
			if matchAny([]string{p}, id, name) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, p)
		}
	}
	return out
}

// NoMatchError reports an --albums pattern that matches no album, with
// the album names nearest to it.
type NoMatchError struct {
	Pattern string
	Nearest []string
}

func (e *NoMatchError) Error() string {
	msg := fmt.Sprintf("--albums %q matches no album", e.Pattern)
	if len(e.Nearest) > 0 {
		msg += "; nearest: " + strings.Join(quoteAll(e.Nearest), ", ")
		if !strings.ContainsAny(e.Pattern, "*?[") {
			msg += " (a pattern matches whole names: try \"" + e.Pattern + "*\")"
		}
	}
	return msg
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// Nearest returns up to n names closest to pattern: those that contain it
// first, then by edit distance, ignoring case.
func Nearest(pattern string, names []string, n int) []string {
	p := strings.ToLower(strings.Trim(pattern, "*?"))
	type scored struct {
		name  string
		score int
	}
	var all []scored
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		l := strings.ToLower(name)
		sc := distance(p, l)
		if strings.Contains(l, p) || strings.Contains(p, l) {
			sc -= 1000
		}
		all = append(all, scored{name, sc})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score < all[j].score
		}
		return all[i].name < all[j].name
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].name)
	}
	return out
}

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
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

// Set is everything a run may be narrowed by. The zero value takes
// everything the account can see.
type Set struct {
	Albums      Albums
	NoShared    bool      // skip albums others own and share with the account
	NoHidden    bool      // skip hidden albums
	NoArchived  bool      // skip archived albums
	Since       time.Time // only files created at or after (zero: no bound)
	Until       time.Time // only files created before (zero: no bound)
	SkipVideos  bool
	SkipLive    bool // skip live photos
	accountUser int64
}

// Album is what an album filter looks at.
type Album struct {
	ID         int64
	Name       string
	OwnerID    int64
	Visibility int // 0 visible, 1 archived, 2 hidden
}

// File is what a file filter looks at.
type File struct {
	FileType     int   // 0 image, 1 video, 2 live photo
	CreationTime int64 // µs since the epoch
}

// ForAccount returns s judging ownership for user id.
func (s Set) ForAccount(id int64) Set {
	s.accountUser = id
	return s
}

// TakeAlbum reports whether the album is chosen.
func (s Set) TakeAlbum(a Album) bool {
	switch {
	case s.NoShared && a.OwnerID != s.accountUser:
		return false
	case s.NoHidden && a.Visibility == 2:
		return false
	case s.NoArchived && a.Visibility == 1:
		return false
	}
	return s.Albums.Take(a.ID, a.Name)
}

// TakeFile reports whether a file is chosen for download.
func (s Set) TakeFile(f File) bool {
	switch {
	case s.SkipVideos && f.FileType == 1:
		return false
	case s.SkipLive && f.FileType == 2:
		return false
	case !s.Since.IsZero() && f.CreationTime < s.Since.UnixMicro():
		return false
	case !s.Until.IsZero() && f.CreationTime >= s.Until.UnixMicro():
		return false
	}
	return true
}

// NarrowsFiles reports whether any file filter is set.
func (s Set) NarrowsFiles() bool {
	return s.SkipVideos || s.SkipLive || !s.Since.IsZero() || !s.Until.IsZero()
}

// ParseTime reads --since/--until: a date (2024-06-01, local midnight), a
// date and time (RFC 3339), or a length of time back from now in
// span.Parse's syntax (90d, 2w, 12h, 6mo).
func ParseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		return t, nil
	}
	sp, err := span.Parse(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("not a date (2024-06-01) or a time (RFC 3339), and %w", err)
	}
	return sp.Before(now), nil
}
