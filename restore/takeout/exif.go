package takeout

import (
	"bytes"
	"encoding/binary"
	"time"
)

// headSize is how much of a file's start quak keeps to read its date:
// a JPEG's Exif block (at most 64 KiB) and a little more.
const headSize = 128 << 10

// fileDate is a date read from a file's own bytes: µs since the epoch
// and, when the file says, its UTC offset ("+02:00").
type fileDate struct {
	micros int64
	offset string
}

// exifDate reads the date a photo was taken from its Exif, as Ente's
// uploader does: DateTimeOriginal, else DateTimeDigitized, else DateTime,
// each with its offset tag when there is one, else in loc. head is the
// file's start: a JPEG, a TIFF-based raw, a PNG or a WebP.
func exifDate(head []byte, loc *time.Location) (fileDate, bool) {
	tiff := exifBlock(head)
	if tiff == nil {
		return fileDate{}, false
	}
	return readTIFFDate(tiff, loc)
}

// exifBlock finds the TIFF structure holding the Exif in head, or nil.
func exifBlock(head []byte) []byte {
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xd8}):
		return jpegExif(head)
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return head
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return pngChunk(head[8:], "eXIf")
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		b := riffChunk(head[12:], "EXIF")
		return bytes.TrimPrefix(b, []byte("Exif\x00\x00"))
	}
	return nil
}

// jpegExif walks a JPEG's markers to its APP1 Exif segment.
func jpegExif(b []byte) []byte {
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return nil
		}
		marker := b[i+1]
		if marker == 0xd8 || marker >= 0xd0 && marker <= 0xd7 || marker == 0x01 || marker == 0xff {
			i += 2
			continue
		}
		if marker == 0xda || marker == 0xd9 { // the image data starts: no Exif before it
			return nil
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return nil
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return seg[6:]
		}
		i += 2 + n
	}
	return nil
}

func pngChunk(b []byte, typ string) []byte {
	for len(b) >= 12 {
		n := binary.BigEndian.Uint32(b)
		if uint64(n)+12 > uint64(len(b)) {
			return nil
		}
		if string(b[4:8]) == typ {
			return b[8 : 8+n]
		}
		if string(b[4:8]) == "IDAT" {
			return nil
		}
		b = b[12+n:]
	}
	return nil
}

func riffChunk(b []byte, typ string) []byte {
	for len(b) >= 8 {
		n := binary.LittleEndian.Uint32(b[4:])
		if uint64(n)+8 > uint64(len(b)) {
			return nil
		}
		if string(b[:4]) == typ {
			return b[8 : 8+n]
		}
		b = b[8+n+n%2:]
	}
	return nil
}

// Exif tags quak reads.
const (
	tagDateTime           = 0x0132
	tagExifIFD            = 0x8769
	tagDateTimeOriginal   = 0x9003
	tagDateTimeDigitized  = 0x9004
	tagOffsetTime         = 0x9010
	tagOffsetTimeOriginal = 0x9011
	tagOffsetTimeDigit    = 0x9012
)

// readTIFFDate reads the dates of IFD0 and the Exif IFD of a TIFF block.
func readTIFFDate(t []byte, loc *time.Location) (fileDate, bool) {
	if len(t) < 8 {
		return fileDate{}, false
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if t[0] == 'M' {
		bo = binary.BigEndian
	}
	ifd0 := readIFD(t, bo, bo.Uint32(t[4:]))
	tags := ifd0
	if off, ok := ifd0[tagExifIFD]; ok && len(off) == 4 {
		for k, v := range readIFD(t, bo, bo.Uint32(off)) {
			tags[k] = v
		}
	}
	for _, pair := range [][2]uint16{{tagDateTimeOriginal, tagOffsetTimeOriginal}, {tagDateTimeDigitized, tagOffsetTimeDigit}, {tagDateTime, tagOffsetTime}} {
		if d, ok := parseExifTime(tags[pair[0]], tags[pair[1]], loc); ok {
			return d, true
		}
	}
	return fileDate{}, false
}

// readIFD reads the ASCII and LONG values of one IFD, by tag.
func readIFD(t []byte, bo binary.ByteOrder, off uint32) map[uint16][]byte {
	out := map[uint16][]byte{}
	if uint64(off)+2 > uint64(len(t)) {
		return out
	}
	n := int(bo.Uint16(t[off:]))
	for i := range n {
		e := int(off) + 2 + 12*i
		if e+12 > len(t) {
			break
		}
		tag, typ, count := bo.Uint16(t[e:]), bo.Uint16(t[e+2:]), bo.Uint32(t[e+4:])
		switch {
		case typ == 2 && count <= 4: // ASCII inline
			out[tag] = t[e+8 : e+8+int(count)]
		case typ == 2 && count <= 64:
			at := bo.Uint32(t[e+8:])
			if uint64(at)+uint64(count) <= uint64(len(t)) {
				out[tag] = t[at : at+count]
			}
		case typ == 4 && count == 1: // LONG: an IFD's offset
			out[tag] = t[e+8 : e+12]
		}
	}
	return out
}

// parseExifTime reads "2019:07:04 10:30:00" with an optional offset tag
// ("+02:00"); without one the time is taken in loc, as Ente's uploader
// takes it in the local time zone. A zero or blank date is no date.
func parseExifTime(v, off []byte, loc *time.Location) (fileDate, bool) {
	s := string(bytes.TrimRight(v, "\x00 "))
	if len(s) < 19 {
		return fileDate{}, false
	}
	offset := string(bytes.TrimRight(off, "\x00 "))
	if offset != "" {
		if t, err := time.Parse("2006:01:02 15:04:05-07:00", s[:19]+offset); err == nil {
			return dateOf(t, offset)
		}
	}
	t, err := time.ParseInLocation("2006:01:02 15:04:05", s[:19], loc)
	if err != nil {
		return fileDate{}, false
	}
	return dateOf(t, "")
}

func dateOf(t time.Time, offset string) (fileDate, bool) {
	if t.Year() < 1800 || t.UnixMicro() == 0 {
		return fileDate{}, false
	}
	return fileDate{micros: t.UnixMicro(), offset: offset}, true
}
