package download

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A large download that does not go on as ranges gives its multi-stream
// place back, however its first range is answered: refused, with the
// whole object, or with other bytes than asked for.
func TestADownloadNotAsRangesGivesItsPlaceBack(t *testing.T) {
	for name, fault := range map[string]enteapitest.Fault{
		"refused":       enteapitest.Status(500),
		"whole":         enteapitest.IgnoreRange(),
		"another range": enteapitest.ShiftRange(10),
	} {
		t.Run(name, func(t *testing.T) {
			fx := newUpgradeFixture(t, oneAttempt)
			fx.f.source().places.unticket() // the place is free
			fx.s.Inject(fx.route, fault)
			p, err := fx.f.Fetch(context.Background(), fx.t, t.TempDir())
			if err == nil {
				got, rerr := os.ReadFile(p.Path())
				require.NoError(t, rerr)
				assert.True(t, bytes.Equal(fx.file.Plaintext(), got), "byte-exact")
				p.Discard()
			}
			assert.Empty(t, fx.f.source().places.multi, "the place is given back")
		})
	}
}

// A download whose ring cannot be had gives the place it took back at
// once, and goes as one stream.
func TestAPlaceWithoutARingIsGivenBack(t *testing.T) {
	f := &Fetcher{Streams: 4, MultiFiles: 1}
	tmp, err := os.Create(filepath.Join(t.TempDir(), "t"))
	require.NoError(t, err)
	defer func() { _ = tmp.Close() }()
	require.NoError(t, os.MkdirAll(filepath.Join(tmp.Name()+aheadSuffix, "in the way"), 0o755))
	file, release := f.source().place((&resume{tmp: tmp}).ringSource(f.source().slots()))
	assert.Nil(t, file)
	assert.Nil(t, release)
	assert.Empty(t, f.source().places.multi, "the place is given back")
}
