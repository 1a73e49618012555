package backup

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/state"
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

// ErrNotListed reports that a public link's album does not list a file
// now. A link cannot ask the server of one file, so this proves nothing: a
// run never prunes on it (only a listing's own deletion does), and a file
// missing on disk is then simply not downloaded again.
var ErrNotListed = errors.New("the link's album does not list the file now; a public link cannot prove it deleted")

// LinkLibrary is the album of one public link: its only album is the one
// Info describes, read with the key the link carries after its #.
type LinkLibrary struct {
	*apiclient.LinkClient
	Info *apiclient.LinkInfo // the link's /info, read by the caller first
	Key  []byte              // the album key

	mu     sync.Mutex
	files  map[int64]*apiclient.File // the whole listing, once asked for
	broken error                     // why the whole listing could not be read, if the server's listing is broken
}

// Collections is the link's one album, as /info described it.
func (l *LinkLibrary) Collections(context.Context, int64) ([]apiclient.Collection, error) {
	return []apiclient.Collection{l.Info.Collection}, nil
}

// OpenAlbum decrypts the album with the link's key.
func (l *LinkLibrary) OpenAlbum(c *apiclient.Collection) (*catalog.Album, error) {
	return catalog.OpenLinkAlbum(c, l.Key)
}

// Diff lists the album's entries changed after since.
func (l *LinkLibrary) Diff(ctx context.Context, collectionID, since int64) (*apiclient.DiffPage, error) {
	if err := l.only(collectionID); err != nil {
		return nil, err
	}
	return l.LinkClient.Diff(ctx, since)
}

// CollectionFile finds a file's entry in the album's whole listing, read
// once a run. A file the listing does not give live is ErrNotListed, never
// a 404: a link cannot prove a deletion.
func (l *LinkLibrary) CollectionFile(ctx context.Context, collectionID, fileID int64) (*apiclient.File, error) {
	if err := l.only(collectionID); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return nil, l.broken // read once a run: each missing file would read it again
	}
	if l.files == nil {
		files, err := l.listAll(ctx)
		if brokenListing(err) {
			l.broken = err
		}
		if err != nil {
			return nil, err
		}
		l.files = files
	}
	f, ok := l.files[fileID]
	if !ok || f.IsDeleted {
		return nil, fmt.Errorf("file %d: %w", fileID, ErrNotListed)
	}
	return f, nil
}

// listAll reads the album's whole listing: each file's latest entry.
func (l *LinkLibrary) listAll(ctx context.Context) (map[int64]*apiclient.File, error) {
	files := map[int64]*apiclient.File{}
	var since int64
	for pages := 1; ; pages++ {
		if pages > maxListingPages {
			return nil, errEndless
		}
		page, err := l.LinkClient.Diff(ctx, since)
		if err != nil {
			return nil, err
		}
		for i := range page.Diff {
			f := page.Diff[i]
			if prev, ok := files[f.ID]; !ok || prev.UpdationTime <= f.UpdationTime {
				files[f.ID] = &f
			}
		}
		next := apiclient.DiffCursor(since, page.Diff)
		switch {
		case !page.HasMore:
			return files, nil
		case next <= since:
			return nil, stuckListing(since)
		}
		since = next
	}
}

// only refuses any album but the link's.
func (l *LinkLibrary) only(collectionID int64) error {
	if collectionID != l.Info.Collection.ID {
		return fmt.Errorf("album %d is not the link's album", collectionID)
	}
	return nil
}

// maxListingPages is the most pages one album's listing may take, far
// beyond any real album (museum gives 2,500 entries a page): a server
// that lists without end is stopped, not followed for ever.
var maxListingPages = 20_000

// errEndless reports an album whose listing did not end within
// maxListingPages pages.
var errEndless = errors.New("listing files: the server's listing of the album did not end (it may be hostile or broken); stopping it")

// errStuck reports a listing page that says there is more without going
// past where the listing was: reading on would read the same page for
// ever, and stopping would take a part of the album for the whole.
var errStuck = errors.New("the server says there is more but its listing does not go on")

// stuckListing is errStuck for a listing at since.
func stuckListing(since int64) error {
	return fmt.Errorf("listing files: %w past %d (it may be hostile or broken)", errStuck, since)
}

// brokenListing reports whether err is a listing that could not be read
// whole because the server's listing is broken: one that never ends or
// does not go on.
func brokenListing(err error) bool { return errors.Is(err, errStuck) || errors.Is(err, errEndless) }

// ListOverlap is how far behind its cursor an album that changed is
// listed again, in µs (10 minutes). museum stamps an entry's updationTime
// when the upload request arrives and commits it up to seconds later
// (after checking the object store, up to ~1.5 s of retries), then sets
// the album's time to that stamp, not to the latest: an entry can appear
// below a cursor a run has already passed. Entries listed again are
// applied only if this backup has not applied them (by file id and time).
const ListOverlap = 10 * 60 * 1_000_000

// listFrom says whether album a is listed this run, from which sinceTime,
// and floor, the cursor at or below which entries may be applied already.
// An album is listed when its time differs from the one of its last full
// listing, in either direction (museum can set it back).
func listFrom(a *catalog.Album, c *state.Collection) (since, floor int64, list bool) {
	return max(c.Cursor-ListOverlap, 0), c.Cursor, c.Seen == 0 || a.UpdationTime != c.Seen
}
