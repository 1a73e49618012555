package catalog

// Meta is what a file's metadata says, with the public edits applied: what
// a saved copy, its name and its sidecars reflect.
type Meta struct {
	Title            string
	FileType         int
	CreationTime     int64 // microseconds since 1970
	ModificationTime int64
	Caption          string
	Latitude         *float64
	Longitude        *float64
	Hash             string // BLAKE2b-512 (base64), "image:video" for a live photo
	// Offset is the UTC offset ("+02:00") of the place the photo was
	// taken, when Ente's apps recorded it.
	Offset string
	// Visibility is the file's own, as its owner set it in Ente's apps (0
	// visible, 1 archived, 2 hidden): the owner's private magic metadata,
	// which no one else sees.
	Visibility int
}

// Equal reports whether a and b say the same (coordinates by value).
func (a Meta) Equal(b Meta) bool {
	if !sameFloat(a.Latitude, b.Latitude) || !sameFloat(a.Longitude, b.Longitude) {
		return false
	}
	a.Latitude, a.Longitude, b.Latitude, b.Longitude = nil, nil, nil, nil
	return a == b
}

func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
