package takeout

import "time"

// sniffer watches a file's bytes go past and keeps what dates it: the
// head of a photo (its Exif), the mvhd of a movie.
type sniffer struct {
	typ   int
	head  []byte
	boxes *boxScanner
}

func newSniffer(name string) *sniffer {
	s := &sniffer{typ: fileType(name)}
	if s.typ == typeVideo {
		s.boxes = &boxScanner{}
	}
	return s
}

// Write takes the next bytes; it never fails.
func (s *sniffer) Write(p []byte) (int, error) {
	if room := headSize - len(s.head); room > 0 && s.typ == typeImage {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	if s.boxes != nil {
		_, _ = s.boxes.Write(p)
	}
	return len(p), nil
}

// date is the date the bytes seen carry, or nil.
func (s *sniffer) date(loc *time.Location) *fileDate {
	var d fileDate
	var ok bool
	switch {
	case s.boxes != nil:
		d, ok = s.boxes.date()
	case s.typ == typeImage:
		d, ok = exifDate(s.head, loc)
	}
	if !ok {
		return nil
	}
	return &d
}
