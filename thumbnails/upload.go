// Package thumbnails regenerates, encrypts and uploads thumbnails that
// Ente's server has lost.
package thumbnails

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/retry"
)

// Upload stores an encrypted thumbnail (one secretstream message under the
// file key, with header) and points the file at it.
//
// Minting the URL and the PUT of the bytes are repeated freely. The commit,
// PUT /files/thumbnail, is not: museum answers 500 to an exact repeat even
// when the first call succeeded. So after a commit that failed transiently,
// Upload re-reads the file and counts "its thumbnail header is now ours" as
// success; only otherwise does it try again, with a fresh object key. The
// policy's attempts and backoff bound those rounds.
func Upload(ctx context.Context, c *apiclient.Client, p retry.Policy, collectionID, fileID int64, header, encrypted []byte) error {
	var last error
	for round := 1; round <= p.MaxAttempts; round++ {
		key, err := put(ctx, c, p, encrypted)
		if err != nil {
			return err
		}
		err = c.UpdateThumbnail(ctx, fileID, key, header)
		if err == nil {
			return nil
		}
		if retry.Classify(err) == retry.Permanent {
			return fmt.Errorf("file %d: committing the thumbnail: %w", fileID, err)
		}
		last = err
		landed, rerr := isOurs(ctx, c, p, collectionID, fileID, header)
		if rerr != nil {
			return errors.Join(fmt.Errorf("file %d: committing the thumbnail: %w", fileID, err), rerr)
		}
		if landed {
			return nil
		}
		if round == p.MaxAttempts {
			break
		}
		d, ok := p.Delay(round, err, p.Now(), p.Rand())
		if !ok {
			break
		}
		if err := p.Sleep(ctx, d); err != nil {
			return err
		}
	}
	return fmt.Errorf("file %d: committing the thumbnail: after %d attempts: %w", fileID, p.MaxAttempts, last)
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
