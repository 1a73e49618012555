package takeout

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var (
	utc     = time.UTC
	berlin  = time.FixedZone("Berlin", 3600)
	nowDate = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
)

func TestNameDatesAsEntesUploaderReadsThem(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s int) int64 {
		return time.Date(y, mo, d, h, mi, s, 0, utc).UnixMicro()
	}
	cases := []struct {
		name string
		want int64 // 0: no date
	}{
		{"IMG-20171218-WA0028.jpg", at(2017, 12, 18, 0, 0, 0)},
		{"VID-20190101-WA0001.mp4", at(2019, 1, 1, 0, 0, 0)},
		{"Screenshot_20181227-152914.jpg", at(2018, 12, 27, 15, 29, 14)},
		{"signal-2024-08-17-21-58-10-982-1.jpg", at(2024, 8, 17, 21, 58, 10)},
		{"signal-2018-08-21-100217.jpg", at(2018, 8, 21, 10, 2, 17)},
		{"20230427_145116000_iOS.jpg", at(2023, 4, 27, 14, 51, 16)},
		{"2018-08-19 12:34:45.jpg", at(2018, 8, 19, 12, 34, 45)},
		{"PXL_20220405_090123740.jpg", 0},                          // nine digits after the eight: not Ente's form
		{"scan 2019-02-30.jpg", 0},                                 // no such day
		{"photo 2019-02-03 25:61:00.jpg", at(2019, 2, 3, 0, 0, 0)}, // an impossible time leaves the day
		{"IMG_1234.jpg", 0},
		{"1985-01-01.jpg", 0}, // before 1990
		{"2031-01-01.jpg", 0}, // after next year
		{"2025-12-24.jpg", 0}, // after now
		{"2025-05-31.jpg", at(2025, 5, 31, 0, 0, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := nameDate(c.name, utc, nowDate)
			assert.Equal(t, c.want != 0, ok)
			assert.Equal(t, c.want, got)
		})
	}
	// Without a zone in the name, the local one is taken.
	got, _ := nameDate("2018-08-19 12:34:45.jpg", berlin, nowDate)
	assert.Equal(t, time.Date(2018, 8, 19, 11, 34, 45, 0, utc).UnixMicro(), got)
}

func TestExifDatesInEveryContainer(t *testing.T) {
	want := time.Date(2023, 5, 6, 5, 8, 9, 0, utc).UnixMicro()
	jpg := exifJPEG(1, "2023:05:06 07:08:09", "+02:00")
	d, ok := exifDate(jpg, utc)
	assert.True(t, ok)
	assert.Equal(t, fileDate{micros: want, offset: "+02:00"}, d)
	// No offset: the local zone.
	d, ok = exifDate(exifJPEG(1, "2023:05:06 07:08:09", ""), berlin)
	assert.True(t, ok)
	assert.Equal(t, time.Date(2023, 5, 6, 6, 8, 9, 0, utc).UnixMicro(), d.micros)
	assert.Equal(t, "", d.offset)
	// The same TIFF block as a raw file, in a PNG, in a WebP.
	seg := app1(jpg)
	tiff := seg[10:]
	for name, file := range map[string][]byte{
		"tiff": tiff,
		"png":  append([]byte("\x89PNG\r\n\x1a\n"), chunk(binary.BigEndian, "eXIf", tiff)...),
		"webp": riff("WEBP", chunkLE("EXIF", append([]byte("Exif\x00\x00"), tiff...))),
	} {
		d, ok := exifDate(file, utc)
		assert.True(t, ok, name)
		assert.Equal(t, want, d.micros, name)
	}
	// No Exif, a zero date, a date cut short.
	for name, file := range map[string][]byte{
		"plain":    jpeg(2),
		"zero":     exifJPEG(1, "0000:00:00 00:00:00", ""),
		"blank":    exifJPEG(1, "                   ", ""),
		"nonsense": []byte("not an image at all"),
	} {
		_, ok := exifDate(file, utc)
		assert.False(t, ok, name)
	}
}

// app1 finds the APP1 segment a JPEG starts with after its SOI.
func app1(jpg []byte) []byte { return jpg[2:] }

func chunk(bo binary.ByteOrder, typ string, data []byte) []byte {
	b := make([]byte, 8, 12+len(data))
	bo.PutUint32(b, uint32(len(data)))
	copy(b[4:], typ)
	return append(append(b, data...), 0, 0, 0, 0)
}

func chunkLE(typ string, data []byte) []byte {
	b := make([]byte, 8, 8+len(data)+1)
	copy(b, typ)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(data)))
	b = append(b, data...)
	if len(data)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

func riff(form string, body []byte) []byte {
	b := []byte("RIFF\x00\x00\x00\x00" + form)
	binary.LittleEndian.PutUint32(b[4:], uint32(4+len(body)))
	return append(b, body...)
}

func TestMovieDatesWhereverTheIndexIs(t *testing.T) {
	when := time.Date(2023, 9, 10, 11, 12, 13, 0, utc)
	for _, last := range []bool{false, true} {
		m := movie(when, 300<<10, last, 7)
		// Fed in small pieces, as a stream gives it.
		s := &boxScanner{}
		for b := m; len(b) > 0; b = b[min(len(b), 1000):] {
			_, _ = s.Write(b[:min(len(b), 1000)])
		}
		d, ok := s.date()
		assert.True(t, ok, "moov last: %v", last)
		assert.Equal(t, when.UnixMicro(), d.micros)
	}
	// A version-1 mvhd has 64-bit times.
	v1 := make([]byte, 120)
	v1[0] = 1
	binary.BigEndian.PutUint64(v1[4:], uint64(when.Sub(quickTimeEpoch)/time.Second))
	m := append(box("ftyp", []byte("qt  \x00\x00\x00\x00qt  ")), box("moov", box("mvhd", v1))...)
	s := &boxScanner{}
	_, _ = s.Write(m)
	d, ok := s.date()
	assert.True(t, ok)
	assert.Equal(t, when.UnixMicro(), d.micros)
	// Not a movie; a movie without a time.
	s = &boxScanner{}
	_, _ = s.Write(jpeg(3))
	_, ok = s.date()
	assert.False(t, ok)
	s = &boxScanner{}
	_, _ = s.Write(movie(quickTimeEpoch, 1000, false, 1))
	_, ok = s.date()
	assert.False(t, ok, "a zero creation time is none")
	// A box of 64-bit size is stepped over.
	big := make([]byte, 16)
	binary.BigEndian.PutUint32(big, 1)
	copy(big[4:], "free")
	binary.BigEndian.PutUint64(big[8:], 16+100)
	m = append(append(box("ftyp", []byte("isom")), append(big, bytes.Repeat([]byte{0}, 100)...)...), box("moov", box("mvhd", v1))...)
	s = &boxScanner{}
	_, _ = s.Write(m)
	d, ok = s.date()
	assert.True(t, ok)
	assert.Equal(t, when.UnixMicro(), d.micros)
}

func box(typ string, body []byte) []byte {
	b := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint32(b, uint32(8+len(body)))
	copy(b[4:], typ)
	return append(b, body...)
}
