package backup

import (
	"context"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
)

// Library is what a backup reads: the albums, their files, and the files'
// encrypted bytes. An account is one (AccountLibrary); a public album link
// is another.
type Library interface {
	download.Objects
	// Collections lists the albums changed since the given time (0: all).
	Collections(ctx context.Context, since int64) ([]apiclient.Collection, error)
	// OpenAlbum decrypts an album's key and name.
	OpenAlbum(c *apiclient.Collection) (*catalog.Album, error)
	// Diff lists an album's entries changed since the given time.
	Diff(ctx context.Context, collectionID, since int64) (*apiclient.DiffPage, error)
	// CollectionFile reads one entry of an album, to download a file again
	// or to prove it deleted (an *errs.ApiError of 404 when it is gone).
	CollectionFile(ctx context.Context, collectionID, fileID int64) (*apiclient.File, error)
	// Answers reports whether the host of a URL answers at all.
	Answers(ctx context.Context, rawURL string) bool
}

// AccountLibrary is an Ente account's library, read with its session
// (Client) and keys.
type AccountLibrary struct {
	*apiclient.Client
	Keys catalog.Keys
}

// OpenAlbum decrypts an album with the account's keys.
func (l *AccountLibrary) OpenAlbum(c *apiclient.Collection) (*catalog.Album, error) {
	return catalog.OpenAlbum(c, l.Keys)
}
