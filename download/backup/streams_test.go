package backup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
)

// Issue 41: unless Transfer.Streams fixes it, the number of ranges of a
// large file is found from the link, from one stream up: the run begins
// the file with one request for all of it. A fixed number asks for
// ranges from the first chunk.
func TestTheNumberOfRangesIsFoundUnlessFixed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		streams int
		first   string
	}{
		{"found", 0, ""},
		{"fixed", download.DefaultStreams, fmt.Sprintf("bytes=0-%d", download.WireChunk-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			f := e.u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 41})
			o := e.options()
			o.Streams = tc.streams
			_, err := Run(t.Context(), o)
			require.NoError(t, err)
			e.same("Videos/long.mp4", f.Plaintext())
			ranges := e.s.Ranges(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID))
			require.NotEmpty(t, ranges)
			assert.Equal(t, tc.first, ranges[0])
			if tc.streams == 0 {
				for _, r := range ranges[1:] {
					assert.True(t, strings.HasPrefix(r, "bytes="), "any later request a range: %q", r)
				}
			}
		})
	}
}
