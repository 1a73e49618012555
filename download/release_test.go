package download_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
)

// Every download gives its decryption buffer back, however it ends: saved,
// cut and taken up again, corrupt, or as ranges. A buffer kept is one the
// next file allocates again.
func TestEveryDownloadGivesItsBufferBack(t *testing.T) {
	fx := setup(t)
	small := fx.album.AddFile(enteapitest.FileSpec{Title: "s", Size: 300 << 10, Seed: 1})
	cut := fx.album.AddFile(enteapitest.FileSpec{Title: "c", Size: 5 << 20, Seed: 2})
	bad := fx.album.AddFile(enteapitest.FileSpec{Title: "b", Size: 5 << 20, Seed: 3})
	large := fx.album.AddFile(enteapitest.FileSpec{Title: "l", Size: 10 << 20, Seed: 4})
	fx.s.Inject(fx.storeRoute(cut), enteapitest.CutAfter(4<<20+100))
	fx.s.Inject(fx.storeRoute(bad), enteapitest.FlipAt(1000))
	start := secretstream.Outstanding()

	for _, f := range []*enteapitest.File{small, cut, large} {
		fe := fx.fetcher()
		fe.Streams, fe.StreamAbove = 4, 8<<20
		p, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(f.Plaintext(), readPartial(t, p)))
		assert.Equal(t, start, secretstream.Outstanding(), "file %s", f.Spec().Title)
	}
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(bad), fx.dir)
	require.ErrorIs(t, err, errs.ErrCorrupted)
	assert.Equal(t, start, secretstream.Outstanding(), "a corrupt download")
}
