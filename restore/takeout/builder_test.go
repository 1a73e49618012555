package takeout

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// tfile is one file of a synthetic Takeout: its name in the archive and
// its bytes.
type tfile struct {
	name string
	data []byte
	link string // a tar's symbolic link to this target
}

const gp = "Takeout/Google Photos/"

// jpeg is a real little JPEG, different for each seed.
func jpeg(seed byte) []byte { return enteapitest.SampleJPEG(32, 24, seed) }

// exifJPEG is a JPEG whose Exif says it was taken at when (with offset
// "+02:00" when offset is set).
func exifJPEG(seed byte, when string, offset string) []byte {
	j := jpeg(seed)
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

// movie is an MP4 of size bytes whose mvhd says it was made at when (UTC),
// with its moov first or after its data.
func movie(when time.Time, size int, moovLast bool, seed byte) []byte {
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
	data := bytes.Repeat([]byte{seed}, max(size-len(ftyp)-len(moov)-8, 0))
	mdat := box("mdat", data)
	if moovLast {
		return append(append(ftyp, mdat...), moov...)
	}
	return append(append(ftyp, moov...), mdat...)
}

// photoJSON is a photo's metadata as Google writes it; extra fields merge in.
func photoJSON(title string, taken int64, extra map[string]any) []byte {
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

func place(lat, long float64) map[string]any {
	return map[string]any{"latitude": lat, "longitude": long, "altitude": 12.5, "latitudeSpan": 0.0, "longitudeSpan": 0.0}
}

// albumJSON is an album's metadata.json (in whatever language's name).
func albumJSON(title string) []byte {
	b, _ := json.Marshal(map[string]any{"title": title, "description": "", "access": "protected",
		"date": map[string]any{"timestamp": "1600000000", "formatted": "…"}})
	return b
}

func writeZip(t *testing.T, path string, files []tfile) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for _, tf := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: tf.name, Method: zip.Deflate, Modified: time.Unix(1716667200, 0)})
		require.NoError(t, err)
		_, err = w.Write(tf.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

func writeTgz(t *testing.T, path string, files []tfile) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, tf := range files {
		h := &tar.Header{Name: tf.name, Mode: 0o644, Size: int64(len(tf.data)), ModTime: time.Unix(1716667200, 0), Typeflag: tar.TypeReg}
		if tf.link != "" {
			h = &tar.Header{Name: tf.name, Mode: 0o777, Linkname: tf.link, Typeflag: tar.TypeSymlink, ModTime: h.ModTime}
		}
		require.NoError(t, tw.WriteHeader(h))
		if tf.link == "" {
			_, err = tw.Write(tf.data)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	require.NoError(t, f.Close())
}

// writeDir unpacks files under root, as a person would unzip a part.
func writeDir(t *testing.T, root string, files []tfile) {
	t.Helper()
	for _, tf := range files {
		p := filepath.Join(root, filepath.FromSlash(tf.name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if tf.link != "" {
			require.NoError(t, os.Symlink(tf.link, p))
			continue
		}
		require.NoError(t, os.WriteFile(p, tf.data, 0o644))
		require.NoError(t, os.Chtimes(p, time.Unix(1716667200, 0), time.Unix(1716667200, 0)))
	}
}

// split deals files into n parts, round robin, so that photos and their
// JSON land in different parts.
func split(files []tfile, n int) [][]tfile {
	out := make([][]tfile, n)
	for i, f := range files {
		out[i%n] = append(out[i%n], f)
	}
	return out
}

// writeParts writes parts of the given kinds ("zip", "tgz", "dir") in dir
// and returns their paths.
func writeParts(t *testing.T, dir string, parts [][]tfile, kinds ...string) []string {
	t.Helper()
	var paths []string
	for i, files := range parts {
		k := kinds[i%len(kinds)]
		p := filepath.Join(dir, fmt.Sprintf("takeout-20240525T201456Z-%03d", i+1))
		switch k {
		case "zip":
			p += ".zip"
			writeZip(t, p, files)
		case "tgz":
			p += ".tgz"
			writeTgz(t, p, files)
		default:
			writeDir(t, p, files)
		}
		paths = append(paths, p)
	}
	return paths
}

func openTakeout(t *testing.T, paths []string, o Options) *Takeout {
	t.Helper()
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }
	}
	tk, err := Open(t.Context(), paths, o)
	require.NoError(t, err)
	t.Cleanup(tk.Close)
	return tk
}

// byTitle finds the originals of a Takeout by title.
func byTitle(t *testing.T, tk *Takeout, title string) []*originalView {
	t.Helper()
	var out []*originalView
	for _, o := range tk.Originals {
		if o.Title == title {
			out = append(out, viewOf(tk, o))
		}
	}
	return out
}

func names(files []tfile) string {
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f.name + "\n")
	}
	return b.String()
}
