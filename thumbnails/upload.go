package thumbnails

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// Upload stores an encrypted thumbnail (one secretstream message under the
// file key, with header) and points the file at it.
//
// Minting the URL and the PUT of the bytes are repeated freely. The commit,
// PUT /files/thumbnail, is sent once: museum answers an exact repeat with
// 500 and leaves its transaction open, which blocks every later write to
// the file, its albums and the account until museum restarts; and a second
// commit under a fresh key after a first one that landed unseen (a re-read
// can be stale) replaces a thumbnail for nothing. Only a 429, which museum's
// rate limiter answers before the commit runs, is waited out and sent
// again. After any other failure Upload re-reads the file: its header now
// being ours means the commit landed; otherwise the error is returned (the
// next run will find the thumbnail still broken and try again).
func Upload(ctx context.Context, c *apiclient.Client, p retry.Policy, collectionID, fileID int64, header, encrypted []byte) error {
	key, err := put(ctx, c, p, encrypted)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err = c.UpdateThumbnail(ctx, fileID, key, header)
		if err == nil {
			return nil
		}
		var ae *errs.ApiError
		if !errors.As(err, &ae) || ae.Status != 429 || attempt >= p.MaxAttempts {
			break
		}
		d, ok := p.Delay(attempt, err, p.Now(), p.Rand())
		if !ok {
			break
		}
		if err := p.Sleep(ctx, d); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = fmt.Errorf("file %d: committing the thumbnail: %w", fileID, err)
	if retry.Classify(err) == retry.Permanent {
		return err
	}
	landed, rerr := isOurs(ctx, c, p, collectionID, fileID, header)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if landed {
		return nil
	}
	return fmt.Errorf("%w; it has not landed, and is not sent again this run", err)
}

// put uploads encrypted under a freshly minted object key.
func put(ctx context.Context, c *apiclient.Client, p retry.Policy, encrypted []byte) (string, error) {
	var u apiclient.UploadURL
	err := retry.Do(ctx, p, func(ctx context.Context) error {
		urls, err := c.UploadURLs(ctx, 1)
		if err == nil && len(urls) != 1 {
			err = fmt.Errorf("asked for 1 upload URL, got %d", len(urls))
		}
		if err == nil {
			u = urls[0]
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("getting an upload URL: %w", err)
	}
	err = retry.Do(ctx, p, func(ctx context.Context) error { return c.PutObject(ctx, u.URL, encrypted) })
	if err != nil {
		return "", fmt.Errorf("uploading the thumbnail: %w", err)
	}
	return u.ObjectKey, nil
}

// isOurs re-reads the file and reports whether its thumbnail header is ours.
func isOurs(ctx context.Context, c *apiclient.Client, p retry.Policy, collectionID, fileID int64, header []byte) (bool, error) {
	var f *apiclient.File
	err := retry.Do(ctx, p, func(ctx context.Context) error {
		var err error
		f, err = c.CollectionFile(ctx, collectionID, fileID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("re-reading file %d: %w", fileID, err)
	}
	return bytes.Equal(f.Thumbnail.DecryptionHeader, header), nil
}
