package state

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient/catalog"
)

// A record's part hashes: what was written (LocalHash) before what the
// metadata claims, a live photo's two halves in the order of its parts, and
// the one half an archive held alone.
func TestPartHashes(t *testing.T) {
	live := catalog.Meta{FileType: 2, Hash: "aW1n:dmlk"}
	for _, c := range []struct {
		name string
		f    File
		want []string
	}{
		{"written", File{LocalHash: "bG9jYWw=", Meta: catalog.Meta{Hash: "bWV0YQ=="}}, []string{"bG9jYWw="}},
		{"as claimed", File{Meta: catalog.Meta{Hash: "bWV0YQ=="}}, []string{"bWV0YQ=="}},
		{"live", File{Meta: live}, []string{"aW1n", "dmlk"}},
		{"live, written", File{Meta: live, LocalHash: "aW1n:b3RoZXI="}, []string{"aW1n", "b3RoZXI="}},
		{"image alone", File{Meta: live, LocalHash: "image:aW1n"}, []string{"aW1n"}},
		{"video alone", File{Meta: live, LocalHash: "video:dmlk"}, []string{"dmlk"}},
		{"live, half a hash", File{Meta: catalog.Meta{FileType: 2, Hash: "aW1n"}}, nil},
		{"not live", File{Meta: catalog.Meta{Hash: "image:aW1n"}}, []string{"image:aW1n"}},
	} {
		assert.Equal(t, c.want, PartHashes(&c.f), c.name)
	}
}
