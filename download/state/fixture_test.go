package state

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
)

// fixtureFile is the record testdata/state/record.json holds: every field
// set, a live photo in three albums, a diff entry kept for a retry in two.
func fixtureFile() *File {
	lat, lon, lat2 := 52.5, 13.25, -33.875
	m := catalog.Meta{Title: "IMG_0042.HEIC", FileType: 2, CreationTime: 1700000000000001, ModificationTime: 1700000000000002,
		Caption: "at the lake", Latitude: &lat, Longitude: &lon, Hash: "aW1hZ2U=:dmlkZW8=", Offset: "+02:00"}
	edited := m
	edited.Caption, edited.Latitude = "renamed in this album", &lat2
	deleted := &apiclient.File{ID: 1003, OwnerID: 1001, CollectionID: 1008, IsDeleted: true, UpdationTime: 1700000000000010,
		EncryptedKey: apiclient.B64{}, KeyDecryptionNonce: apiclient.B64{},
		File: apiclient.FileAttributes{DecryptionHeader: apiclient.B64{}}, Thumbnail: apiclient.FileAttributes{DecryptionHeader: apiclient.B64{}},
		Metadata: apiclient.FileAttributes{DecryptionHeader: apiclient.B64{}}}
	return &File{ID: 1003, OwnerID: 1001, Header: "xqFpHOuOIxX45mEEQkOYmXWwF6sslmzW", Size: 1041, Meta: m,
		LocalHash: "aW1hZ2U=:dmlkZW8x", Status: Failed, Error: "connection reset",
		Entries: map[int64]*Entry{
			1002: {Name: "IMG_0042.HEIC", Parts: []string{"IMG_0042.HEIC", "IMG_0042.MOV"}, Meta: m, Updated: 1700000000000003,
				Sidecars: []string{"IMG_0042.HEIC.xmp"}, SidecarHashes: map[string]string{"IMG_0042.HEIC.xmp": "ab12"}},
			1004: {Name: "IMG_0042 (2).HEIC", Parts: []string{"IMG_0042 (2).HEIC", "IMG_0042 (2).MOV"}, Meta: edited,
				Deleted: true, Copy: true, Stale: true},
			1005: {Name: "one.jpg", Parts: []string{"one.jpg"}, Meta: catalog.Meta{Title: "one.jpg"}},
		},
		Pending:     fixtureDiffEntry(1002),
		PendingAlso: []*apiclient.File{fixtureDiffEntry(1004), deleted},
		View: &View{Folder: "2023/11", Parts: []string{"IMG_0042.HEIC", "IMG_0042.MOV"}, Title: "IMG_0042.HEIC",
			Header: "xqFpHOuOIxX45mEEQkOYmXWwF6sslmzW", Copy: true, Sidecars: []string{"IMG_0042.HEIC.xmp"},
			SidecarHashes: map[string]string{"IMG_0042.HEIC.xmp": "cd34"}},
		Trash: []TrashCopy{{CollectionID: 1006, Parts: []string{".trash/a.HEIC", ".trash/a.MOV"}, Sidecar: ".trash/a.json",
			XMP: []string{".trash/a.HEIC.xmp", ""}, Takeout: []string{"", ".trash/a.MOV.json"}}},
	}
}

func fixtureDiffEntry(collection int64) *apiclient.File {
	return &apiclient.File{ID: 1003, OwnerID: 1001, CollectionID: collection, CollectionOwnerID: 1007,
		EncryptedKey: apiclient.B64{0xfb, 0xff, 0x01}, KeyDecryptionNonce: apiclient.B64{0xfe, 0x02},
		File:             apiclient.FileAttributes{DecryptionHeader: apiclient.B64{1, 2, 3}, ObjectKey: "1001/f", Size: 1041},
		Thumbnail:        apiclient.FileAttributes{DecryptionHeader: apiclient.B64{4, 5, 6}, ObjectKey: "1001/t", Size: 77},
		Metadata:         apiclient.FileAttributes{EncryptedData: apiclient.B64{7, 8, 9, 10}, DecryptionHeader: apiclient.B64{11}},
		MagicMetadata:    &apiclient.MagicMetadata{Version: 3, Count: 1, Data: apiclient.B64{12}, Header: apiclient.B64{13}},
		PubMagicMetadata: &apiclient.MagicMetadata{Version: 2, Count: 4, Data: apiclient.B64{14, 15}, Header: apiclient.B64{16}},
		Info:             &apiclient.FileInfo{FileSize: 1041, ThumbSize: 77},
		UpdationTime:     1700000000000009}
}

func fixtureRecord(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "state", "record.json"))
	require.NoError(t, err)
	return bytes.TrimSuffix(b, []byte("\n"))
}

// A record as quak wrote it before the state kept its own record types
// (testdata/state/record.json) reads as the file it was, and the same file is
// written as the same bytes: an existing state.db still reads, and a change
// of a JSON name anywhere in quak fails here.
func TestARecordOfThisFormatReadsAndIsWrittenTheSame(t *testing.T) {
	saved := fixtureRecord(t)
	f, err := decodeFile(saved)
	require.NoError(t, err)
	assert.Equal(t, fixtureFile(), f)

	written, err := encodeFile(fixtureFile())
	require.NoError(t, err)
	assert.Equal(t, string(saved), string(written))
}

// Every field of a diff entry kept for a retry comes back: a field apiclient
// gains is not silently dropped from the record.
func TestEveryFieldOfADiffEntryIsKept(t *testing.T) {
	var f apiclient.File
	fill(t, reflect.ValueOf(&f).Elem(), 1)
	got := diskDiffEntryOf(&f).diffEntry()
	assert.Equal(t, &f, got)
	assert.Nil(t, diskDiffEntryOf(nil).diffEntry())
	assert.Nil(t, diffEntries(diskDiffEntries(nil)))
}

// fill sets every field reachable from v to a value other than its zero.
func fill(t *testing.T, v reflect.Value, n int) int {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			n = fill(t, v.Field(i), n)
		}
		return n
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return fill(t, v.Elem(), n)
	case reflect.Slice:
		require.Equal(t, reflect.Uint8, v.Type().Elem().Kind(), "a slice of %s: teach fill to set it", v.Type().Elem())
		v.SetBytes([]byte{byte(n)})
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(n))
	case reflect.String:
		v.SetString(string(rune('a' + n)))
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("fill: %s: teach fill to set it", v.Type())
	}
	return n + 1
}

// A byte field that is not standard base64 is a damaged record, not an
// empty field.
func TestADamagedByteFieldIsAnError(t *testing.T) {
	for _, field := range []string{`"%%%"`, `"-"`, `7`, `"+/8B"`} {
		rec := `{"v":2,"id":1,"meta":{"title":"a"},"status":"failed","pending":{"id":1,"encryptedKey":` + field + `}}`
		_, err := decodeFile([]byte(rec))
		if field == `"+/8B"` {
			assert.NoError(t, err, field)
			continue
		}
		assert.Error(t, err, field)
	}
}
