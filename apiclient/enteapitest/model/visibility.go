package model

import (
	"encoding/json"

	"github.com/quak-photos/quak/apiclient/secretstream"
)

// SetVisibility archives (1) or hides (2) the file on its own, or shows
// it again (0), as Ente's apps do through PUT /files/magic-metadata: its
// owner's private magic metadata becomes {"visibility": v} under the file
// key, one version up, and every live album entry of the file is bumped,
// as museum does, so each album's listing shows it again.
func (f *File) SetVisibility(v int) {
	m := f.m
	m.mu.Lock()
	defer m.mu.Unlock()
	version := 1
	if old := m.up.magic[f.ID]; old != nil {
		version = old.Version + 1
	}
	b, _ := json.Marshal(map[string]int{"visibility": v})
	h := m.random(secretstream.HeaderSize)
	m.up.magic[f.ID] = &Magic{Version: version, Count: 1, Data: mustSeal(f.sealKey(), h, b), Header: h}
	f.touch()
}
