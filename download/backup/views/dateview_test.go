package views

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/download/state"
)

// A date view's sidecar taken out keeps the other's record: that one is
// still quak's, kept in step with the server.
func TestDisowningOneDateViewSidecarKeepsTheOthers(t *testing.T) {
	v := &state.View{Sidecars: []string{"x.jpg.xmp", "x.jpg.supplemental-metadata.json"},
		SidecarHashes: map[string]string{"x.jpg.xmp": "1", "x.jpg.supplemental-metadata.json": "2"}}
	disownView(v, "x.jpg.xmp")
	assert.Equal(t, []string{"x.jpg.supplemental-metadata.json"}, v.Sidecars)
	assert.Equal(t, map[string]string{"x.jpg.supplemental-metadata.json": "2"}, v.SidecarHashes)
	disownView(v, "x.jpg.supplemental-metadata.json")
	assert.Empty(t, v.Sidecars)
	assert.Nil(t, v.SidecarHashes, "no empty record left behind")
}
