package filter

import (
	"reflect"
	"testing"
	"time"
)

func TestAlbums(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Albums
		id   int64
		take bool
	}{
		{"Holidays", Albums{}, 1, true},
		{"Holidays", Albums{Include: []string{"holidays"}}, 1, true},
		{"Holidays 2024", Albums{Include: []string{"Holidays"}}, 1, false},
		{"Holidays 2024", Albums{Include: []string{"Holi*"}}, 1, true},
		{"Family", Albums{Include: []string{"Holi*"}}, 1, false},
		{"Family", Albums{Include: []string{"1001"}}, 1001, true},
		{"Family", Albums{Include: []string{"1001"}}, 1002, false},
		{"1001", Albums{Include: []string{"1001"}}, 5, false},
		{"Family", Albums{Exclude: []string{"fam*"}}, 1, false},
		{"Family", Albums{Include: []string{"*"}, Exclude: []string{"7"}}, 7, false},
		{"Family", Albums{Include: []string{"*"}, Exclude: []string{"7"}}, 8, true},
	} {
		if got := c.a.Take(c.id, c.name); got != c.take {
			t.Errorf("%+v takes %q (%d): %v, want %v", c.a, c.name, c.id, got, c.take)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (Albums{Include: []string{"[a-"}}).Validate(); err == nil {
		t.Fatal("a malformed glob passed")
	}
	if err := (Albums{Exclude: []string{" "}}).Validate(); err == nil {
		t.Fatal("an empty pattern passed")
	}
	if err := (Albums{Include: []string{"Holi*", "12"}}).Validate(); err != nil {
		t.Fatal(err)
	}
	if !(Albums{}).Empty() || (Albums{Exclude: []string{"x"}}).Empty() {
		t.Fatal("Empty")
	}
}

func TestSet(t *testing.T) {
	s := Set{NoShared: true, NoHidden: true}.ForAccount(7)
	if !s.TakeAlbum(Album{ID: 1, Name: "x", OwnerID: 7}) || s.TakeAlbum(Album{ID: 2, OwnerID: 8}) ||
		s.TakeAlbum(Album{ID: 3, OwnerID: 7, Visibility: 2}) || !s.TakeAlbum(Album{ID: 4, OwnerID: 7, Visibility: 1}) {
		t.Fatal("album flags")
	}
	if (Set{NoArchived: true}).TakeAlbum(Album{Visibility: 1}) {
		t.Fatal("--no-archived")
	}
	jan, feb := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	f := Set{Since: jan, Until: feb, SkipVideos: true, SkipLive: true}
	for _, c := range []struct {
		file File
		take bool
	}{
		{File{FileType: 0, CreationTime: jan.UnixMicro()}, true},
		{File{FileType: 0, CreationTime: jan.UnixMicro() - 1}, false},
		{File{FileType: 0, CreationTime: feb.UnixMicro() - 1}, true},
		{File{FileType: 0, CreationTime: feb.UnixMicro()}, false},
		{File{FileType: 1, CreationTime: jan.UnixMicro()}, false},
		{File{FileType: 2, CreationTime: jan.UnixMicro()}, false},
		{File{FileType: 3, CreationTime: jan.UnixMicro()}, true},
	} {
		if f.TakeFile(c.file) != c.take {
			t.Errorf("%+v: want %v", c.file, c.take)
		}
	}
	if (Set{}).NarrowsFiles() || !f.NarrowsFiles() {
		t.Fatal("NarrowsFiles")
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2024-06-01":           time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC),
		"2024-06-01T10:00:00Z": time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC),
		"30d":                  now.Add(-30 * 24 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
		"12h":                  now.Add(-12 * time.Hour),
		"6mo":                  time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC),
	} {
		got, err := ParseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-3d", "2024-13-01", "d", "1m", "30"} {
		if _, err := ParseTime(bad, now); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestUnmatchedAndNearest(t *testing.T) {
	albums := map[int64]string{1: "Holidays 2024", 2: "Family", 3: "holiday snaps", 4: "Work"}
	a := Albums{Include: []string{"Holidays", "fam*", "3", "Wrk", "99"}}
	if got := a.Unmatched(albums); !reflect.DeepEqual(got, []string{"Holidays", "Wrk", "99"}) {
		t.Fatalf("unmatched %q", got)
	}
	names := []string{"Holidays 2024", "Family", "holiday snaps", "Work"}
	if got := Nearest("Holidays", names, 2); !reflect.DeepEqual(got, []string{"Holidays 2024", "holiday snaps"}) {
		t.Fatalf("nearest %q", got)
	}
	if got := Nearest("Wrk", names, 1); !reflect.DeepEqual(got, []string{"Work"}) {
		t.Fatalf("nearest %q", got)
	}
	msg := (&NoMatchError{Pattern: "Holidays", Nearest: []string{"Holidays 2024"}}).Error()
	if msg != `--albums "Holidays" matches no album; nearest: "Holidays 2024" (a pattern matches whole names: try "Holidays*")` {
		t.Fatal(msg)
	}
}

func TestNearestEdges(t *testing.T) {
	if got := Nearest("x", []string{"bb", "aa", "bb"}, 10); !reflect.DeepEqual(got, []string{"aa", "bb"}) {
		t.Fatalf("fewer names than asked, ties by name, no repeats: %q", got)
	}
	if got := Nearest("abc", []string{"abd", "abx"}, 2); !reflect.DeepEqual(got, []string{"abd", "abx"}) {
		t.Fatalf("equal distance: by name: %q", got)
	}
	if got := Nearest("ab", []string{"zzzz", "xab-long-name"}, 1); !reflect.DeepEqual(got, []string{"xab-long-name"}) {
		t.Fatalf("a name containing the pattern first: %q", got)
	}
	if msg := (&NoMatchError{Pattern: "X"}).Error(); msg != `--albums "X" matches no album` {
		t.Fatalf("no album at all: %q", msg)
	}
	if msg := (&NoMatchError{Pattern: "X*", Nearest: []string{"Y"}}).Error(); msg != `--albums "X*" matches no album; nearest: "Y"` {
		t.Fatalf("a glob already: %q", msg)
	}
}
