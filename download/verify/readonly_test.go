//go:build unix

package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder/foldertest"
)

// A backup on a read-only mount (an offsite disk, a snapshot) is
// verified: nothing is locked or recorded there, and a damaged file is
// still found.
func TestVerifiesABackupThatCannotBeWritten(t *testing.T) {
	fx := newFix(t)
	a := fx.u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 1000, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 1000, Seed: 2})
	fx.backup(t)
	path := filepath.Join(fx.dir, "Trip", "b.jpg")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[0] ^= 1
	require.NoError(t, os.WriteFile(path, b, 0o644))
	foldertest.ReadOnly(t, fx.dir)

	var got []Problem
	sum, err := Run(context.Background(), Options{Dir: fx.dir, Events: func(p Problem) { got = append(got, p) }})
	require.NoError(t, err)
	assert.True(t, sum.ReadOnly)
	assert.NoError(t, sum.Unrecorded, "no record is tried where none can be written")
	assert.Equal(t, 2, sum.Checked)
	require.Len(t, got, 1)
	assert.Equal(t, Changed, got[0].Kind)
	again, err := Run(context.Background(), Options{Dir: fx.dir, Sample: 50})
	require.NoError(t, err)
	assert.Equal(t, 2, again.Unverified, "nothing was recorded as checked")
}
