package thumbnails

// SniffLength is how much of an original's start Missing needs.
const SniffLength = 12

// Missing names the program a thumbnail of an original needs and t cannot
// find (ffmpeg for a video, heif-dec for a HEIC or HEIF), from the first
// SniffLength bytes of the original (head) and Ente's fileType; "" when
// Go decodes it itself, the program is there, or no program would read
// it. Without that program the original gets Ente's placeholder.
func (t Tools) Missing(head []byte, fileType int) string {
	kind, err := sniff(head, fileType)
	if err != nil {
		return ""
	}
	var names []string
	switch kind {
	case kindVideo:
		names = []string{"ffmpeg"}
	case kindHEIF:
		names = heifConverters
	default:
		return ""
	}
	for _, n := range names {
		if _, err := t.LookPath(n); err == nil {
			return ""
		}
	}
	return names[0]
}

// MissesAny reports whether any program Missing can name is missing.
func (t Tools) MissesAny() bool {
	return t.Missing(nil, 1) != "" || t.Missing([]byte("\x00\x00\x00\x18ftypheic"), 0) != ""
}
