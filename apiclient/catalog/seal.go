package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// SealMagic encodes fields as one of Ente's magic metadata envelopes under
// key (a file's or an album's), the reverse of what OpenItem and OpenAlbum
// read: the JSON object of the fields whose value is not null, sealed as a
// blob under a fresh header read from rand, the number of those fields, and
// version (1 for a new file or album). It returns nil when no field is
// left: museum refuses a count of 0, and Ente's apps then send no
// envelope at all.
func SealMagic(rand io.Reader, key []byte, version int, fields map[string]any) (*apiclient.MagicMetadata, error) {
	if version < 1 {
		return nil, fmt.Errorf("magic metadata version %d: versions start at 1", version)
	}
	kept := map[string]json.RawMessage{}
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("magic metadata field %q: %w", k, err)
		}
		if !bytes.Equal(b, []byte("null")) {
			kept[k] = b
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(kept) // keys sorted: the same fields make the same JSON
	if err != nil {
		return nil, fmt.Errorf("magic metadata: %w", err)
	}
	ct, header, err := secretstream.EncryptBlob(rand, key, data)
	if err != nil {
		return nil, fmt.Errorf("magic metadata: %w", err)
	}
	return &apiclient.MagicMetadata{Version: version, Count: len(kept), Data: ct, Header: header}, nil
}
