package restore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// uploadMeta is the metadata JSON Ente's web app writes at upload (UP.3):
// times in µs, the place only when known, the hash of the plaintext
// ("image:video" for a live photo).
type uploadMeta struct {
	FileType           int      `json:"fileType"`
	Title              string   `json:"title"`
	CreationTime       int64    `json:"creationTime"`
	ModificationTime   int64    `json:"modificationTime"`
	Hash               string   `json:"hash"`
	Latitude           *float64 `json:"latitude,omitempty"`
	Longitude          *float64 `json:"longitude,omitempty"`
	HasStaticThumbnail bool     `json:"hasStaticThumbnail,omitempty"`
}

// metadataJSON is o's metadata as the backup knows it, edits applied: its
// title, times and place come back as they were last seen.
func metadataJSON(o *original, placeholder bool) ([]byte, error) {
	m := o.rec.Meta
	return json.Marshal(uploadMeta{FileType: m.FileType, Title: m.Title, CreationTime: m.CreationTime,
		ModificationTime: m.ModificationTime, Hash: o.hash(), Latitude: m.Latitude, Longitude: m.Longitude,
		HasStaticThumbnail: placeholder})
}

// publicFields are o's public magic metadata at upload: its caption and
// the offset of the place it was taken; empty ones are dropped.
func publicFields(o *original) map[string]any {
	f := map[string]any{}
	if o.rec.Meta.Caption != "" {
		f["caption"] = o.rec.Meta.Caption
	}
	if o.rec.Meta.Offset != "" {
		f["offsetTime"] = o.rec.Meta.Offset
	}
	return f
}

// privateFields are o's private magic metadata at upload: whether its
// owner archived or hid it on its own (an import's archived original is
// archived, visibility 1). Ente's apps set it later (PUT
// /files/magic-metadata); museum takes it at upload too, in one step with
// the file.
func privateFields(o *original) map[string]any {
	if o.src != nil && o.src.Archived {
		return map[string]any{"visibility": 1}
	}
	if v := o.rec.Meta.Visibility; v == 1 || v == 2 {
		return map[string]any{"visibility": v}
	}
	return nil
}

// selfCheck opens what is about to be sent as a reader of the target
// would: the file key from its box under the album key, the first chunk
// of the original, the thumbnail, the metadata and the public magic
// metadata (and the private one, when it has one). museum checks none of it, and keeps junk for good (UP.4).
func selfCheck(s *sealed) error {
	bad := func(what string, err error) error {
		return fmt.Errorf("refusing to upload: its %s does not open as sent: %w", what, err)
	}
	key, err := keys.SecretboxOpen(s.nf.EncryptedKey, s.nf.KeyDecryptionNonce, s.home.Key)
	if err != nil || !bytes.Equal(key, s.key) {
		return bad("file key", err)
	}
	rd, err := secretstream.NewReader(key, s.header, bytes.NewReader(s.m.first), s.m.size)
	if err != nil {
		return bad("original", err)
	}
	defer rd.Release()
	if err := readsAs(rd, s.m.plain); err != nil {
		return bad("original", err)
	}
	md, err := secretstream.OpenBlob(key, s.nf.Metadata.DecryptionHeader, s.nf.Metadata.EncryptedData)
	if err != nil || !bytes.Equal(md, s.md) {
		return bad("metadata", err)
	}
	for _, m := range []struct {
		what string
		mm   *apiclient.MagicMetadata
	}{{"public magic metadata", s.nf.PubMagicMetadata}, {"magic metadata", s.nf.MagicMetadata}} {
		if m.mm != nil {
			if _, err := secretstream.OpenBlob(key, m.mm.Header, m.mm.Data); err != nil {
				return bad(m.what, err)
			}
		}
	}
	return nil
}

// readsAs checks that r gives want's bytes first, a piece at a time (no
// copy of a whole chunk is made).
func readsAs(r io.Reader, want []byte) error {
	buf := make([]byte, 64<<10)
	for len(want) > 0 {
		n, err := io.ReadFull(r, buf[:min(len(buf), len(want))])
		if err != nil {
			return err
		}
		if !bytes.Equal(buf[:n], want[:n]) {
			return errors.New("it opens to other bytes")
		}
		want = want[n:]
	}
	return nil
}
