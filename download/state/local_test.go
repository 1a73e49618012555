package state

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestALocalFilesHashIsKeptByItsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := Open(path)
	require.NoError(t, err)
	_, ok, err := st.Local("A/x.jpg")
	require.NoError(t, err)
	assert.False(t, ok, "nothing hashed yet")
	lf := LocalFile{Size: 5, MTime: 7, Hash: "aGFzaA=="}
	require.NoError(t, st.PutLocal("A/x.jpg", lf))
	require.NoError(t, st.Close())

	st, err = Open(path)
	require.NoError(t, err)
	defer func() { _ = st.Close() }()
	got, ok, err := st.Local("A/x.jpg")
	require.NoError(t, err)
	assert.True(t, ok, "kept for a later run")
	assert.Equal(t, lf, got)
	_, ok, err = st.Local("A/y.jpg")
	require.NoError(t, err)
	assert.False(t, ok)
}
