package restore

import (
	"context"
	"errors"
	"io"
)

// Original is one file an import adds to the account, as its source
// describes it: its parts (one, or a live photo's image and video), its
// metadata and the albums that hold it.
type Original struct {
	// Key names its content across runs, as the source can tell it before
	// reading it (a zip entry's size and CRC-32, say): the journal's
	// records of it are found by it. Two originals never share a key.
	Key string
	// Where names it in the source, for a person ("takeout-001.zip:
	// Takeout/Google Photos/Trip/IMG_1.jpg").
	Where string
	Title string
	// FileType is Ente's: 0 an image, 1 a video, 2 a live photo.
	FileType int
	Parts    []Part
	// Hash is Ente's hash of its content ("image:video" for a live photo)
	// when the source knows it before the parts are read, else "".
	Hash string
	// Times are µs since the epoch. A source may fill in what it learns
	// from the bytes of the parts while they are read (a photo's Exif
	// date); the import reads them only after reading every part to its end.
	CreationTime     int64
	ModificationTime int64
	Latitude         *float64
	Longitude        *float64
	Caption          string
	Offset           string // the UTC offset of CreationTime, when known
	Archived         bool
	// Albums are the ImportAlbums that hold it, by id; its upload goes
	// into the first that is not the favourites.
	Albums []int64
}

// Part is one part of an original: its name in the source (a live photo's
// archive names its parts by their extensions) and its size in bytes.
type Part struct {
	Name string
	Size int64
}

// ImportAlbum is an album of an import's source: its id (stable across
// runs: the journal records what it became in the account), its name,
// Ente's type: "album", "favorites" or "uncategorized", and its visibility:
// 0, or 2 with the name HiddenAlbum for Ente's default hidden album.
type ImportAlbum struct {
	ID         int64
	Name       string
	Type       string
	Visibility int
}

// HiddenAlbum is the name of Ente's default hidden album: an ImportAlbum
// of that name and visibility 2 is it (made when the account has none).
const HiddenAlbum = hiddenName

// Source gives an import the bytes of its originals.
type Source interface {
	// Read calls put once for each original in want, with a reader of each
	// of its parts, in the order that suits how the source is stored, from
	// as many goroutines as suits it. put reads every part to its end
	// before it returns, unless it fails. When put's error is one of the
	// source's own (a *SourceError: a damaged entry), Read may call put
	// again with another copy of the same content, or give up on the
	// original with fail; when put answers ErrReadAgain, it wants the same
	// original again, and Read either calls put again or fails it. Read
	// returns when every original of want was put or failed, or ctx ends.
	Read(ctx context.Context, want []*Original, put PutFunc, fail func(*Original, error)) error
}

// PutFunc takes one original's parts from a Source.
type PutFunc func(ctx context.Context, o *Original, parts []io.Reader) error

// SourceError is a source that could not give an original's bytes: a
// damaged or truncated entry, a file changed since it was listed.
type SourceError struct {
	Where string
	Err   error
}

func (e *SourceError) Error() string { return e.Where + ": " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// ErrReadAgain is put's answer when it read an original only to learn its
// hash, and now needs its bytes again to upload them.
var ErrReadAgain = errors.New("read it again")
