package restore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRestoreIntoAnEmptyAccountGivesTheLibraryBack(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)

	sum := e.mustRestore()
	assert.Equal(t, 6, sum.Files)
	assert.Equal(t, 6, sum.Uploaded)
	assert.Equal(t, 0, sum.Present)
	assert.Equal(t, 4, sum.AlbumsCreated, "Trip, Family, Favorites, .hidden")
	assert.Equal(t, 2, sum.Placeholders, "the video without ffmpeg, the HEIC without libheif")
	var told int64
	for _, ev := range e.events {
		if ev.Kind == Uploaded {
			told += ev.Bytes
		}
	}
	assert.Equal(t, sum.Bytes, told, "the events add up to the summary")
	e.sameAsSource()

	again := e.mustRestore()
	assert.Equal(t, 0, again.Uploaded)
	assert.Equal(t, int64(0), again.Bytes, "a second restore uploads nothing")
	assert.Equal(t, 6, again.Present)
	assert.Equal(t, 0, again.AlbumsCreated)
	assert.Equal(t, 0, again.Added)
	e.sameAsSource()
}

func TestRestoreOriginalsAreByteIdentical(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	e.mustRestore()
	again := t.TempDir()
	e.backup(e.dst, again)
	want, got := fileBytes(t, e.dir), fileBytes(t, again)
	require.NotEmpty(t, want)
	for name, b := range want {
		sameBytes(t, b, got[name], name)
	}
}
