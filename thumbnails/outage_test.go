package thumbnails

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// The object store answers 404 for every thumbnail for a while (a bucket
// being migrated, a proxy misrouting /thumb paths): every loss is looked
// at again after a wait, and when every thumbnail still looks lost the
// run replaces none of them and stops with *StoreUnavailableError.
func TestAStoreWide404ReplacesNoThumbnailAndStops(t *testing.T) {
	fx := newFix(t)
	var files []*enteapitest.File
	for i := range 6 {
		thumb := append(jpegOf(t, photo(200, 100, byte(i+1))), make([]byte, roomy)...)
		files = append(files, fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Data: jpegOf(t, photo(200, 100, byte(i+1))), Thumbnail: thumb}))
	}
	fx.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if strings.HasPrefix(route, "GET /store/") && strings.Contains(route, "/thumb-") {
			return enteapitest.Status(404), true
		}
		return enteapitest.Fault{}, false
	})
	o := fx.options(t)
	sum, err := Run(context.Background(), o)
	var su *StoreUnavailableError
	require.True(t, errors.As(err, &su), "err %v", err)
	assert.Equal(t, 6, su.Lost)
	assert.Equal(t, 6, su.Checked)
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"), "no thumbnail replaced")
	assert.Len(t, sum.Problems, len(files))
	waits := 0
	for _, d := range fx.sleeps {
		if d == LossRecheckWait {
			waits++
		}
	}
	assert.Equal(t, len(files), waits, "each loss is confirmed after a wait")
}

func TestImplausibleLoss(t *testing.T) {
	for _, c := range []struct {
		lost, checked int
		want          bool
	}{
		{0, 0, false}, {1, 1, false}, {3, 3, false}, {4, 4, true},
		{2, 4, false}, {3, 4, true}, {3, 6, false}, {4, 6, true}, {1, 100, false},
	} {
		assert.Equal(t, c.want, implausibleLoss(c.lost, c.checked), "%d of %d", c.lost, c.checked)
	}
}
