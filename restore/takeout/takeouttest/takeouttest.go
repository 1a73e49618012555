// Package takeouttest builds synthetic Google Takeouts for tests: real
// little JPEGs (some with Exif dates), movies with an mvhd, Google's JSON,
// written as zip, tgz or folder parts.
package takeouttest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// File is one file of a synthetic Takeout: its name in the archive and
// its bytes, or a symbolic link.
type File struct {
	Name string
	Data []byte
	Link string // a symbolic link to this target
	// Claim, when not zero, is the size a zip part's directory declares
	// for the file instead of its own (the file is stored, not deflated).
	Claim uint64
}

// GP is the folder of Google Photos in a Takeout.
const GP = "Takeout/Google Photos/"

// Exif tags and QuickTime's epoch, as Exif and MP4 write them.
const (
	tagExifIFD            = 0x8769
	tagDateTimeOriginal   = 0x9003
	tagOffsetTimeOriginal = 0x9011
)

var quickTimeEpoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)

// JPEG is a real little JPEG, different for each seed.
func JPEG(seed byte) []byte { return enteapitest.SampleJPEG(32, 24, seed) }

// ExifJPEG is a JPEG whose Exif says it was taken at when (with offset
// "+02:00" when offset is set).
func ExifJPEG(seed byte, when string, offset string) []byte {
	j := JPEG(seed)
	return append(append([]byte{0xff, 0xd8}, app1Exif(when, offset)...), j[2:]...)
}

// app1Exif builds an APP1 segment with a little-endian TIFF block: IFD0
// points to an Exif IFD holding DateTimeOriginal and OffsetTimeOriginal.
func app1Exif(when, offset string) []byte {
	var t bytes.Buffer
	le := binary.LittleEndian
	t.WriteString("II*\x00")
	_ = binary.Write(&t, le, uint32(8))
	// IFD0: one entry, the Exif IFD pointer.
	_ = binary.Write(&t, le, uint16(1))
	_ = binary.Write(&t, le, [3]uint16{tagExifIFD, 4, 1})
	_ = binary.Write(&t, le, uint16(0)) // count high half
	_ = binary.Write(&t, le, uint32(26))
	_ = binary.Write(&t, le, uint32(0))
	// Exif IFD at 26: DateTimeOriginal (20 bytes at 56), offset (7 at 76).
	n := uint16(1)
	if offset != "" {
		n = 2
	}
	_ = binary.Write(&t, le, n)
	_ = binary.Write(&t, le, []uint16{tagDateTimeOriginal, 2})
	_ = binary.Write(&t, le, uint32(20))
	_ = binary.Write(&t, le, uint32(56))
	if offset != "" {
		_ = binary.Write(&t, le, []uint16{tagOffsetTimeOriginal, 2})
		_ = binary.Write(&t, le, uint32(7))
		_ = binary.Write(&t, le, uint32(76))
	}
	_ = binary.Write(&t, le, uint32(0))
	for t.Len() < 56 {
		t.WriteByte(0)
	}
	t.WriteString(when + "\x00")
	if offset != "" {
		t.WriteString(offset + "\x00")
	}
	seg := append([]byte("Exif\x00\x00"), t.Bytes()...)
	return append([]byte{0xff, 0xe1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}, seg...)
}

// Movie is an MP4 of size bytes whose mvhd says it was made at when (UTC),
// with its moov first or after its data.
func Movie(when time.Time, size int, moovLast bool, seed byte) []byte {
	box := func(typ string, body []byte) []byte {
		b := make([]byte, 8, 8+len(body))
		binary.BigEndian.PutUint32(b, uint32(8+len(body)))
		copy(b[4:], typ)
		return append(b, body...)
	}
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[4:], uint32(when.Sub(quickTimeEpoch)/time.Second))
	moov := box("moov", box("mvhd", mvhd))
	ftyp := box("ftyp", []byte("isom\x00\x00\x02\x00isomiso2mp41"))
	data := Noise(max(size-len(ftyp)-len(moov)-8, 0), seed)
	mdat := box("mdat", data)
	if moovLast {
		return append(append(ftyp, mdat...), moov...)
	}
	return append(append(ftyp, moov...), mdat...)
}

// PhotoJSON is a photo's metadata as Google writes it; extra fields merge in.
func PhotoJSON(title string, taken int64, extra map[string]any) []byte {
	m := map[string]any{
		"title":          title,
		"description":    "",
		"imageViews":     "3",
		"creationTime":   map[string]any{"timestamp": "1700000000", "formatted": "Nov 14, 2023, 10:13:20 PM UTC"},
		"photoTakenTime": map[string]any{"timestamp": fmt.Sprint(taken), "formatted": "…"},
		"geoData":        map[string]any{"latitude": 0.0, "longitude": 0.0, "altitude": 0.0},
		"geoDataExif":    map[string]any{"latitude": 0.0, "longitude": 0.0, "altitude": 0.0},
		"url":            "https://photos.google.com/photo/AF1Qip",
		"googlePhotosOrigin": map[string]any{"mobileUpload": map[string]any{
			"deviceFolder": map[string]any{"localFolderName": ""}, "deviceType": "ANDROID_PHONE"}},
	}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// Place is a place as Google writes one.
func Place(lat, long float64) map[string]any {
	return map[string]any{"latitude": lat, "longitude": long, "altitude": 12.5, "latitudeSpan": 0.0, "longitudeSpan": 0.0}
}

// AlbumJSON is an album's metadata.json (in whatever language's name).
func AlbumJSON(title string) []byte {
	b, _ := json.Marshal(map[string]any{"title": title, "description": "", "access": "protected",
		"date": map[string]any{"timestamp": "1600000000", "formatted": "…"}})
	return b
}

// WriteZip writes files as a zip part, deflated.
func WriteZip(tb testing.TB, path string, files []File) {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	zw := zip.NewWriter(f)
	for _, tf := range files {
		var w io.Writer
		var err error
		if tf.Claim != 0 {
			w, err = zw.CreateRaw(&zip.FileHeader{Name: tf.Name, Method: zip.Store, Modified: time.Unix(1716667200, 0),
				CRC32: crc32.ChecksumIEEE(tf.Data), CompressedSize64: uint64(len(tf.Data)), UncompressedSize64: tf.Claim})
		} else {
			w, err = zw.CreateHeader(&zip.FileHeader{Name: tf.Name, Method: zip.Deflate, Modified: time.Unix(1716667200, 0)})
		}
		require.NoError(tb, err)
		_, err = w.Write(tf.Data)
		require.NoError(tb, err)
	}
	require.NoError(tb, zw.Close())
	require.NoError(tb, f.Close())
}

// WriteTgz writes files as a tgz part.
func WriteTgz(tb testing.TB, path string, files []File) {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, tf := range files {
		h := &tar.Header{Name: tf.Name, Mode: 0o644, Size: int64(len(tf.Data)), ModTime: time.Unix(1716667200, 0), Typeflag: tar.TypeReg}
		if tf.Link != "" {
			h = &tar.Header{Name: tf.Name, Mode: 0o777, Linkname: tf.Link, Typeflag: tar.TypeSymlink, ModTime: h.ModTime}
		}
		require.NoError(tb, tw.WriteHeader(h))
		if tf.Link == "" {
			_, err = tw.Write(tf.Data)
			require.NoError(tb, err)
		}
	}
	require.NoError(tb, tw.Close())
	require.NoError(tb, gz.Close())
	require.NoError(tb, f.Close())
}

// WriteDir unpacks files under root, as a person would unzip a part.
func WriteDir(tb testing.TB, root string, files []File) {
	tb.Helper()
	for _, tf := range files {
		p := filepath.Join(root, filepath.FromSlash(tf.Name))
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		if tf.Link != "" {
			require.NoError(tb, os.Symlink(tf.Link, p))
			continue
		}
		require.NoError(tb, os.WriteFile(p, tf.Data, 0o644))
		require.NoError(tb, os.Chtimes(p, time.Unix(1716667200, 0), time.Unix(1716667200, 0)))
	}
}

// Split deals files into n parts, round robin, so that photos and their
// JSON land in different parts.
func Split(files []File, n int) [][]File {
	out := make([][]File, n)
	for i, f := range files {
		out[i%n] = append(out[i%n], f)
	}
	return out
}

// WriteParts writes parts of the given kinds ("zip", "tgz", "dir") in dir
// and returns their paths.
func WriteParts(tb testing.TB, dir string, parts [][]File, kinds ...string) []string {
	tb.Helper()
	var paths []string
	for i, files := range parts {
		k := kinds[i%len(kinds)]
		p := filepath.Join(dir, fmt.Sprintf("takeout-20240525T201456Z-%03d", i+1))
		switch k {
		case "zip":
			p += ".zip"
			WriteZip(tb, p, files)
		case "tgz":
			p += ".tgz"
			WriteTgz(tb, p, files)
		default:
			WriteDir(tb, p, files)
		}
		paths = append(paths, p)
	}
	return paths
}

// Noise is n bytes no compressor shrinks, the same for the same seed.
func Noise(n int, seed byte) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}
