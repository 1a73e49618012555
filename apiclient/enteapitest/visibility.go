package enteapitest

import (
	"encoding/json"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/secretstream"
)

// SetVisibility archives (1) or hides (2) the file on its own, or shows
// it again (0), as Ente's apps do through PUT /files/magic-metadata: its
// owner's private magic metadata becomes {"visibility": v} under the file
// key, one version up, and every live album entry of the file is bumped,
// as museum does, so each album's listing shows it again.
func (f *File) SetVisibility(v int) {
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	up := s.up()
	version := 1
	if old := up.magic[f.ID]; old != nil {
		version = old.Version + 1
	}
	b, _ := json.Marshal(map[string]int{"visibility": v})
	h := s.random(secretstream.HeaderSize)
	up.magic[f.ID] = &apiclient.MagicMetadata{Version: version, Count: 1, Data: mustSeal(f.sealKey(), h, b), Header: h}
	f.touch()
}
