package state

import (
	"encoding/base64"
	"encoding/json"

	"github.com/quak-photos/quak/apiclient"
)

// diskDiffEntry is a diff entry kept for a retry (File.Pending and
// PendingAlso) as state.db holds it. The names are museum's, but the type is
// this package's: a change to apiclient's wire types changes no record, and
// every record written so far reads the same (testdata/state pins the bytes).
type diskDiffEntry struct {
	ID                 int64              `json:"id"`
	OwnerID            int64              `json:"ownerID"`
	CollectionID       int64              `json:"collectionID"`
	CollectionOwnerID  int64              `json:"collectionOwnerID,omitempty"`
	EncryptedKey       b64                `json:"encryptedKey"`
	KeyDecryptionNonce b64                `json:"keyDecryptionNonce"`
	File               diskFileAttributes `json:"file"`
	Thumbnail          diskFileAttributes `json:"thumbnail"`
	Metadata           diskFileAttributes `json:"metadata"`
	MagicMetadata      *diskMagicMetadata `json:"magicMetadata,omitempty"`
	PubMagicMetadata   *diskMagicMetadata `json:"pubMagicMetadata,omitempty"`
	Info               *diskFileInfo      `json:"info,omitempty"`
	IsDeleted          bool               `json:"isDeleted"`
	UpdationTime       int64              `json:"updationTime"`
}

type diskFileAttributes struct {
	EncryptedData    b64    `json:"encryptedData,omitempty"`
	DecryptionHeader b64    `json:"decryptionHeader"`
	ObjectKey        string `json:"objectKey,omitempty"`
	Size             int64  `json:"size,omitempty"`
}

type diskMagicMetadata struct {
	Version int `json:"version"`
	Count   int `json:"count"`
	Data    b64 `json:"data"`
	Header  b64 `json:"header"`
}

type diskFileInfo struct {
	FileSize  int64 `json:"fileSize,omitempty"`
	ThumbSize int64 `json:"thumbSize,omitempty"`
}

// b64 is a binary field as records hold it: standard padded base64, "" for
// none.
type b64 []byte

func (b b64) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

func (b *b64) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := base64.StdEncoding.DecodeString(s)
	*b = v
	return err
}

func diskDiffEntries(fs []*apiclient.File) []*diskDiffEntry {
	if fs == nil {
		return nil
	}
	d := make([]*diskDiffEntry, len(fs))
	for i, f := range fs {
		d[i] = diskDiffEntryOf(f)
	}
	return d
}

func diffEntries(ds []*diskDiffEntry) []*apiclient.File {
	if ds == nil {
		return nil
	}
	fs := make([]*apiclient.File, len(ds))
	for i, d := range ds {
		fs[i] = d.diffEntry()
	}
	return fs
}

func diskDiffEntryOf(f *apiclient.File) *diskDiffEntry {
	if f == nil {
		return nil
	}
	d := &diskDiffEntry{ID: f.ID, OwnerID: f.OwnerID, CollectionID: f.CollectionID, CollectionOwnerID: f.CollectionOwnerID,
		EncryptedKey: b64(f.EncryptedKey), KeyDecryptionNonce: b64(f.KeyDecryptionNonce),
		File: diskFileAttributesOf(f.File), Thumbnail: diskFileAttributesOf(f.Thumbnail), Metadata: diskFileAttributesOf(f.Metadata),
		MagicMetadata: diskMagicMetadataOf(f.MagicMetadata), PubMagicMetadata: diskMagicMetadataOf(f.PubMagicMetadata),
		IsDeleted: f.IsDeleted, UpdationTime: f.UpdationTime}
	if f.Info != nil {
		d.Info = &diskFileInfo{FileSize: f.Info.FileSize, ThumbSize: f.Info.ThumbSize}
	}
	return d
}

func (d *diskDiffEntry) diffEntry() *apiclient.File {
	if d == nil {
		return nil
	}
	f := &apiclient.File{ID: d.ID, OwnerID: d.OwnerID, CollectionID: d.CollectionID, CollectionOwnerID: d.CollectionOwnerID,
		EncryptedKey: apiclient.B64(d.EncryptedKey), KeyDecryptionNonce: apiclient.B64(d.KeyDecryptionNonce),
		File: d.File.attributes(), Thumbnail: d.Thumbnail.attributes(), Metadata: d.Metadata.attributes(),
		MagicMetadata: d.MagicMetadata.magicMetadata(), PubMagicMetadata: d.PubMagicMetadata.magicMetadata(),
		IsDeleted: d.IsDeleted, UpdationTime: d.UpdationTime}
	if d.Info != nil {
		f.Info = &apiclient.FileInfo{FileSize: d.Info.FileSize, ThumbSize: d.Info.ThumbSize}
	}
	return f
}

func diskFileAttributesOf(a apiclient.FileAttributes) diskFileAttributes {
	return diskFileAttributes{EncryptedData: b64(a.EncryptedData), DecryptionHeader: b64(a.DecryptionHeader),
		ObjectKey: a.ObjectKey, Size: a.Size}
}

func (d diskFileAttributes) attributes() apiclient.FileAttributes {
	return apiclient.FileAttributes{EncryptedData: apiclient.B64(d.EncryptedData), DecryptionHeader: apiclient.B64(d.DecryptionHeader),
		ObjectKey: d.ObjectKey, Size: d.Size}
}

func diskMagicMetadataOf(m *apiclient.MagicMetadata) *diskMagicMetadata {
	if m == nil {
		return nil
	}
	return &diskMagicMetadata{Version: m.Version, Count: m.Count, Data: b64(m.Data), Header: b64(m.Header)}
}

func (d *diskMagicMetadata) magicMetadata() *apiclient.MagicMetadata {
	if d == nil {
		return nil
	}
	return &apiclient.MagicMetadata{Version: d.Version, Count: d.Count, Data: apiclient.B64(d.Data), Header: apiclient.B64(d.Header)}
}
