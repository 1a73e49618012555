package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An account is named with what its folder recorded of it, and nothing
// it did not.
func TestAccountName(t *testing.T) {
	for want, a := range map[string]Account{
		"carol@example.org on http://a (user 7)": {UserID: 7, Email: "carol@example.org", Endpoint: "http://a"},
		"carol@example.org (user 7)":             {UserID: 7, Email: "carol@example.org"},
		"carol@example.org on http://a":          {Email: "carol@example.org", Endpoint: "http://a"},
		"user 7 on http://a":                     {UserID: 7, Endpoint: "http://a"},
	} {
		assert.Equal(t, want, a.Name())
	}
}

func TestRoundTripAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	require.NoError(t, err)
	a, err := s.Account()
	require.NoError(t, err)
	assert.Nil(t, a)
	require.NoError(t, s.SetAccount(Account{UserID: 7, Email: "a@b", Endpoint: "http://x"}))

	c := &Collection{ID: 3, Name: "Holidays", Folder: "Holidays", Cursor: 10}
	f := &File{ID: 9, Status: Saved, Entries: map[int64]*Entry{3: {Name: "x.jpg", Parts: []string{"x.jpg"}}}}
	require.NoError(t, s.Commit([]*File{f}, c))
	require.NoError(t, s.Close())

	s, err = Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	a, err = s.Account()
	require.NoError(t, err)
	assert.Equal(t, int64(7), a.UserID)
	cs, err := s.Collections()
	require.NoError(t, err)
	assert.Equal(t, int64(10), cs[3].Cursor)
	got, err := s.File(9)
	require.NoError(t, err)
	assert.Equal(t, "x.jpg", got.Entries[3].Name)
	missing, err := s.File(10)
	require.NoError(t, err)
	assert.Nil(t, missing)
	n := 0
	require.NoError(t, s.Files(func(*File) error { n++; return nil }))
	assert.Equal(t, 1, n)
}

func TestSecondOpenIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	_, err = Open(path)
	assert.ErrorIs(t, err, ErrBusy)
}

func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	_, err := OpenReadOnly(path)
	require.Error(t, err, "a missing state is not created")
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Commit([]*File{{ID: 4, Status: Saved}}, nil))
	_, err = OpenReadOnly(path)
	require.ErrorIs(t, err, ErrBusy, "a running backup holds the state")
	require.NoError(t, s.Close())

	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	f, err := r.File(4)
	require.NoError(t, err)
	assert.Equal(t, Saved, f.Status)
	require.Error(t, r.Commit([]*File{{ID: 5}}, nil), "read-only means read-only")
	require.NoError(t, r.Close())
}

func TestLooksValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if !LooksValid(f) {
		t.Fatal("a new state database does not look valid")
	}
	if LooksValid(strings.NewReader(strings.Repeat("x", 4096))) || LooksValid(strings.NewReader("")) {
		t.Fatal("garbage looks valid")
	}
}
