package apiclient

import (
	"encoding/json"

	"github.com/quak-photos/quak/apiclient/keys"
)

// B64 is a binary JSON field. It is written as Ente expects (standard base64
// with padding) and read leniently: padded or not, either alphabet. A value
// that is not base64 at all, such as the "-" museum writes into the fields of
// permanently deleted files, reads as empty rather than failing the page.
type B64 []byte

// MarshalJSON writes standard padded base64.
func (b B64) MarshalJSON() ([]byte, error) {
	return json.Marshal(keys.EncodeB64(b))
}

// UnmarshalJSON reads any base64 form; see B64.
func (b *B64) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		*b = nil
		return nil //nolint:nilerr // null or a number where bytes belong reads as empty, as documented
	}
	v, err := keys.DecodeB64(s)
	if err != nil {
		*b = nil
		return nil //nolint:nilerr // scrubbed fields ("-") read as empty, as documented
	}
	*b = v
	return nil
}
