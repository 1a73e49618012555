package takeout

import (
	"encoding/binary"
	"time"
)

// quickTimeEpoch is where QuickTime and MP4 times count from.
var quickTimeEpoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)

// moovKeep is how much of a movie's moov box is kept to find its mvhd,
// which leads it in every file seen (it may follow a few small boxes).
const moovKeep = 64 << 10

// boxScanner finds an MP4 or QuickTime movie's creation time (its mvhd's,
// in UTC, which ffmpeg calls creation_time and Ente's uploader falls back
// on) as the file's bytes stream past, wherever its moov box is: it steps
// over the top-level boxes and keeps only the start of moov.
type boxScanner struct {
	hdr  []byte // the top-level box header being read
	skip int64  // bytes left in a box passed over
	moov []byte // the start of the moov box, once found
	want int    // bytes of moov still to keep
	done bool   // found, or the file is not a movie
	more bool   // past the first box
}

// Write takes the next bytes of the file; it never fails.
func (s *boxScanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !s.done {
		switch {
		case s.want > 0:
			k := min(s.want, len(p))
			s.moov = append(s.moov, p[:k]...)
			s.want -= k
			p = p[k:]
			if s.want == 0 {
				s.done = true
			}
		case s.skip > 0:
			k := min(s.skip, int64(len(p)))
			s.skip -= k
			p = p[k:]
		default:
			k := min(16-len(s.hdr), len(p))
			s.hdr = append(s.hdr, p[:k]...)
			p = p[k:]
			if len(s.hdr) == 16 {
				p = append(s.box(), p...)
			}
		}
	}
	return n, nil
}

// box starts the box whose header (and up to 8 bytes beyond) is in hdr,
// and returns the bytes read past its header.
func (s *boxScanner) box() []byte {
	h := s.hdr
	s.hdr = nil
	size, typ, hl := int64(binary.BigEndian.Uint32(h)), string(h[4:8]), int64(8)
	if size == 1 {
		size, hl = int64(binary.BigEndian.Uint64(h[8:])), 16
	}
	first := !s.more
	s.more = true
	if first && typ != "ftyp" && typ != "moov" && typ != "mdat" && typ != "wide" && typ != "free" && typ != "skip" {
		s.done = true // not a movie
		return nil
	}
	rest := h[hl:]
	if typ == "moov" {
		s.want = moovKeep
		if size >= hl {
			s.want = int(min(size-hl, moovKeep))
		}
		return rest
	}
	if size < hl { // 0: the box runs to the end of the file
		s.done = true
		return nil
	}
	s.skip = size - hl
	return rest
}

// date reads the creation time of the mvhd at the head of the kept moov.
func (s *boxScanner) date() (fileDate, bool) {
	b := s.moov
	for len(b) >= 8 {
		size, typ := int(binary.BigEndian.Uint32(b)), string(b[4:8])
		if typ == "mvhd" && len(b) >= 8+4+8 {
			var secs uint64
			if b[8] == 1 {
				secs = binary.BigEndian.Uint64(b[12:])
			} else {
				secs = uint64(binary.BigEndian.Uint32(b[12:]))
			}
			if secs == 0 || secs > 1<<40 {
				return fileDate{}, false
			}
			return dateOf(quickTimeEpoch.Add(time.Duration(secs)*time.Second), "")
		}
		if size < 8 || size > len(b) {
			return fileDate{}, false
		}
		b = b[size:]
	}
	return fileDate{}, false
}
