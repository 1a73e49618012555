package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pages lists album a for u from 0 to its end as museum pages it, and
// returns each page's file ids.
func pages(t *testing.T, m *Museum, u *User, a *Album) [][]int64 {
	t.Helper()
	var out [][]int64
	var since int64
	for range 20 {
		page, more, err := m.Diff(u, a.ID, since)
		require.NoError(t, err)
		var ids []int64
		for _, e := range page {
			ids = append(ids, e.FileID)
			since = max(since, e.UpdationTime)
		}
		out = append(out, ids)
		if !more {
			return out
		}
	}
	t.Fatal("the diff never ended")
	return nil
}

// museum cuts a page before the entries of its last entry's time when more
// follow (a short page), and gives one time alone on a page longer than
// PageSize when nothing else fits (CollectionController.getDiff).
func TestDiffPagesAreCutAsMuseumCutsThem(t *testing.T) {
	m := New(Config{PageSize: 3})
	u := m.AddUser("a@example.org", "a", UserOptions{})
	a := u.AddAlbum("x")
	var ids []int64
	add := func() { ids = append(ids, a.AddFile(FileSpec{Title: "f", Data: []byte("f")}).ID) }
	add()
	add()
	m.Freeze()
	for range 4 {
		add()
	}
	m.Unfreeze()
	add()
	add()
	add()
	got := pages(t, m, u, a)
	assert.Equal(t, [][]int64{ids[0:2], ids[2:6], ids[6:9]}, got,
		"2 (the frozen 4 would split), the 4 frozen alone, then the last 3 with nothing more")
}

// A page of exactly PageSize entries is whole, and says no more follow.
func TestAFullLastPageHasNoMore(t *testing.T) {
	m := New(Config{PageSize: 2})
	u := m.AddUser("a@example.org", "a", UserOptions{})
	a := u.AddAlbum("x")
	f1 := a.AddFile(FileSpec{Title: "1", Data: []byte("1")})
	f2 := a.AddFile(FileSpec{Title: "2", Data: []byte("2")})
	assert.Equal(t, [][]int64{{f1.ID, f2.ID}}, pages(t, m, u, a))
}

// An entry removed from its album keeps what it had; only the flag and
// the time change.
func TestARemovedEntryKeepsItsKeyAndMetadata(t *testing.T) {
	m := New(Config{})
	u := m.AddUser("a@example.org", "a", UserOptions{})
	a := u.AddAlbum("x")
	f := a.AddFile(FileSpec{Title: "f", Data: []byte("f")})
	before, _, err := m.Diff(u, a.ID, 0)
	require.NoError(t, err)
	a.Remove(f)
	after, _, err := m.Diff(u, a.ID, 0)
	require.NoError(t, err)
	require.Len(t, after, 1)
	assert.True(t, after[0].IsDeleted)
	assert.Greater(t, after[0].UpdationTime, before[0].UpdationTime)
	assert.Equal(t, before[0].AddedAt, after[0].AddedAt, "added once")
	after[0].IsDeleted, after[0].UpdationTime = false, before[0].UpdationTime
	assert.Equal(t, before[0], after[0])
}
