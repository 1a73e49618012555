package catalog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// Keys are the account keys that open collection keys.
type Keys struct {
	UserID    int64
	MasterKey []byte
	PublicKey []byte
	SecretKey []byte
}

// Album is a decrypted collection.
type Album struct {
	ID           int64
	Name         string
	Type         string
	OwnerID      int64
	OwnerEmail   string
	Deleted      bool
	UpdationTime int64
	Visibility   int // 0 visible, 1 archived, 2 hidden
	Key          []byte
}

// OpenAlbum decrypts a collection. Its key is a secretbox under the master
// key when the account owns it, else a sealed box to the account's key pair:
// decided by owner id, never by whether a nonce is present.
func OpenAlbum(c *apiclient.Collection, k Keys) (*Album, error) {
	a := &Album{ID: c.ID, Type: c.Type, OwnerID: c.Owner.ID, OwnerEmail: c.Owner.Email,
		Deleted: c.IsDeleted, UpdationTime: c.UpdationTime}
	if c.IsDeleted {
		return a, nil
	}
	var err error
	if c.Owner.ID == k.UserID {
		a.Key, err = keys.SecretboxOpen(c.EncryptedKey, c.KeyDecryptionNonce, k.MasterKey)
	} else {
		a.Key, err = keys.SealedBoxOpen(c.EncryptedKey, k.PublicKey, k.SecretKey)
	}
	if err != nil {
		return nil, fmt.Errorf("album %d: opening its key: %w", c.ID, err)
	}
	a.Name = c.Name
	if a.Name == "" {
		name, err := keys.SecretboxOpen(c.EncryptedName, c.NameDecryptionNonce, a.Key)
		if err != nil {
			return nil, fmt.Errorf("album %d: opening its name: %w", c.ID, err)
		}
		a.Name = string(name)
	}
	mm := c.MagicMetadata
	if c.Owner.ID != k.UserID {
		mm = c.SharedMagicMetadata
	}
	var vis struct {
		Visibility int `json:"visibility"`
	}
	if openMagic(mm, a.Key, &vis) == nil {
		a.Visibility = vis.Visibility
	}
	return a, nil
}

func openMagic(mm *apiclient.MagicMetadata, key []byte, v any) error {
	if mm == nil || len(mm.Data) == 0 {
		return nil
	}
	b, err := secretstream.OpenBlob(key, mm.Header, mm.Data)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Item is a decrypted file entry of one album.
type Item struct {
	FileID       int64
	CollectionID int64
	OwnerID      int64
	Deleted      bool
	UpdationTime int64
	Key          []byte
	Header       []byte
	Size         int64 // ciphertext size, or -1 when unknown
	Meta         Meta
	// Placeholder: the uploader could not make a thumbnail and stored
	// Ente's fixed black one (metadata.hasStaticThumbnail, or
	// pubMagicMetadata.noThumb from the mobile apps).
	Placeholder bool
	Raw         *apiclient.File
}

// OpenItem decrypts a file entry with its album's key. Deleted entries come
// back with Deleted set and nothing else decrypted.
func OpenItem(f *apiclient.File, a *Album) (*Item, error) {
	it := &Item{FileID: f.ID, CollectionID: a.ID, OwnerID: f.OwnerID, Deleted: f.IsDeleted,
		UpdationTime: f.UpdationTime, Size: -1, Raw: f}
	if f.IsDeleted {
		return it, nil
	}
	key, err := keys.SecretboxOpen(f.EncryptedKey, f.KeyDecryptionNonce, a.Key)
	if err != nil {
		return nil, fmt.Errorf("file %d: opening its key: %w", f.ID, err)
	}
	it.Key, it.Header = key, f.File.DecryptionHeader
	if f.Info != nil && f.Info.FileSize > 0 {
		it.Size = f.Info.FileSize
	}
	md, err := secretstream.OpenBlob(key, f.Metadata.DecryptionHeader, f.Metadata.EncryptedData)
	if err != nil {
		return nil, fmt.Errorf("file %d: opening its metadata: %w", f.ID, err)
	}
	if it.Meta, err = parseMetadata(md); err != nil {
		return nil, fmt.Errorf("file %d: reading its metadata: %w", f.ID, err)
	}
	var static struct {
		HasStaticThumbnail bool `json:"hasStaticThumbnail"`
	}
	_ = json.Unmarshal(md, &static) // parseMetadata accepted it already
	var pub publicMagic
	if err := openMagic(f.PubMagicMetadata, key, &pub); err == nil {
		pub.apply(&it.Meta)
	}
	var own privateMagic // only the owner's listing carries it
	if err := openMagic(f.MagicMetadata, key, &own); err == nil && (own.Visibility == 1 || own.Visibility == 2) {
		it.Meta.Visibility = own.Visibility
	}
	it.Placeholder = static.HasStaticThumbnail || pub.NoThumb
	return it, nil
}

type metadata struct {
	FileType         *json.Number `json:"fileType"`
	Title            string       `json:"title"`
	CreationTime     json.Number  `json:"creationTime"`
	ModificationTime json.Number  `json:"modificationTime"`
	Latitude         *float64     `json:"latitude"`
	Longitude        *float64     `json:"longitude"`
	Hash             string       `json:"hash"`
	ImageHash        string       `json:"imageHash"`
	VideoHash        string       `json:"videoHash"`
}

func parseMetadata(b []byte) (Meta, error) {
	var md metadata
	if err := json.Unmarshal(b, &md); err != nil {
		return Meta{}, err
	}
	m := Meta{Title: md.Title, Hash: md.Hash}
	if md.FileType != nil {
		t, err := md.FileType.Int64()
		if err != nil {
			return m, fmt.Errorf("fileType %q", md.FileType.String())
		}
		m.FileType = int(t)
	}
	m.CreationTime = number(md.CreationTime)
	m.ModificationTime = number(md.ModificationTime)
	if m.ModificationTime == 0 {
		m.ModificationTime = m.CreationTime
	}
	if md.Latitude != nil && md.Longitude != nil && (*md.Latitude != 0 || *md.Longitude != 0) {
		m.Latitude, m.Longitude = md.Latitude, md.Longitude
	}
	if m.Hash == "" && md.ImageHash != "" && md.VideoHash != "" {
		m.Hash = md.ImageHash + ":" + md.VideoHash
	}
	return m, nil
}

// number reads an int64 that some clients wrote as a float.
func number(n json.Number) int64 {
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return int64(f)
}

// privateMagic is what a file's owner alone sees of it: whether it is
// archived (1) or hidden (2) on its own, apart from its albums.
type privateMagic struct {
	Visibility int `json:"visibility"`
}

// publicMagic holds the edits any participant sees.
type publicMagic struct {
	EditedName string          `json:"editedName"`
	EditedTime json.Number     `json:"editedTime"`
	Caption    json.RawMessage `json:"caption"`
	Lat        *float64        `json:"lat"`
	Long       *float64        `json:"long"`
	NoThumb    bool            `json:"noThumb"`
	OffsetTime string          `json:"offsetTime"`
}

func (p publicMagic) apply(m *Meta) {
	if p.EditedName != "" {
		m.Title = p.EditedName
	}
	if t := number(p.EditedTime); t != 0 {
		m.CreationTime = t
	}
	if c := caption(p.Caption); c != "" {
		m.Caption = c
	}
	if p.Lat != nil && p.Long != nil && (*p.Lat != 0 || *p.Long != 0) {
		m.Latitude, m.Longitude = p.Lat, p.Long
	}
	if _, ok := ParseOffset(p.OffsetTime); ok {
		m.Offset = p.OffsetTime
	}
}

// ParseOffset reads a "±HH:mm" offset from UTC, as Ente's apps record the
// offset of the place a photo was taken (pubMagicMetadata.offsetTime), in
// seconds east of UTC.
func ParseOffset(s string) (int, bool) {
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return 0, false
	}
	h, err1 := strconv.Atoi(s[1:3])
	m, err2 := strconv.Atoi(s[4:6])
	if err1 != nil || err2 != nil || h > 14 || m > 59 || strings.ContainsAny(s[1:3]+s[4:6], "+-") {
		return 0, false
	}
	off := (h*60 + m) * 60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// caption reads a caption that legacy records may hold as a number.
func caption(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

// IsLivePhoto reports Ente's live-photo file type (a zip of image and video).
func IsLivePhoto(m Meta) bool { return m.FileType == 2 }

// SplitLiveHash splits "imageHash:videoHash".
func SplitLiveHash(h string) (image, video string, ok bool) {
	image, video, ok = strings.Cut(h, ":")
	return image, video, ok && image != "" && video != ""
}
