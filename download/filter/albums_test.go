package filter

import "testing"

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
