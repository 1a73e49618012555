package thumbnails

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/secretstream"
)

// repair makes a new thumbnail for c from its original, fits it to the
// size on record, and (unless a dry run) uploads, commits and reads it back.
func (r *run) repair(ctx context.Context, c *candidate) (Action, int64, error) {
	budget, err := r.recordedSize(ctx, c)
	if err != nil {
		return Failed, 0, err
	}
	if budget <= secretstream.Overhead {
		return TooLarge, 0, fmt.Errorf("%w: the server records no room for this thumbnail (%d bytes)", ErrTooLarge, budget)
	}
	if !r.takeSlot() {
		return Skipped, 0, nil
	}
	work, err := os.MkdirTemp(r.tmp, "file-")
	if err != nil {
		return Failed, 0, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	img, err := r.original(ctx, c, work)
	switch {
	case errors.Is(err, ErrUnsupported):
		return Unsupported, 0, err
	case err != nil:
		return Failed, 0, err
	}
	jpg, err := Fit(img, budget)
	if errors.Is(err, ErrTooLarge) {
		return TooLarge, 0, fmt.Errorf("%w (%d bytes)", err, budget)
	}
	if err != nil {
		return Failed, 0, err
	}
	size := encryptedSize(len(jpg))
	if r.o.DryRun {
		return WouldRepair, size, nil
	}
	header, err := secretstream.NewHeader(r.o.Rand)
	if err != nil {
		return Failed, 0, err
	}
	enc, err := secretstream.SealBlob(c.item.Key, header, jpg)
	if err != nil {
		return Failed, 0, err
	}
	if err := Upload(ctx, r.o.Client, r.o.Policy, c.collectionID, c.item.FileID, header, enc); err != nil {
		return Failed, size, err
	}
	// Count it repaired only once the server serves back what was uploaded.
	back, err := r.fetchThumbnail(ctx, c.item.FileID)
	if err != nil {
		return Failed, size, fmt.Errorf("committed, but reading the new thumbnail back failed: %w", err)
	}
	plain, err := secretstream.OpenBlob(c.item.Key, header, back)
	if err != nil {
		return Failed, size, fmt.Errorf("committed, but the thumbnail read back does not decrypt: %w", err)
	}
	if !bytes.Equal(plain, jpg) {
		return Failed, size, errors.New("committed, but the server serves another thumbnail")
	}
	return Repaired, size, nil
}

// original decodes c's original: the verified copy in --from's backup when
// there is one, else a download checked against Ente's hash exactly as
// backup checks it. A live photo gives its image part.
func (r *run) original(ctx context.Context, c *candidate, work string) (image.Image, error) {
	it := c.item
	live := catalog.IsLivePhoto(it.Meta)
	if r.from != nil {
		if path, ok := r.from.find(it); ok {
			return r.o.Tools.decodeFile(ctx, path, work, imageType(it.Meta.FileType))
		}
	}
	if it.Meta.Hash == "" {
		// Without a hash quak cannot tell the original it would draw from is
		// the one uploaded; a wrong thumbnail is worse than a grey tile.
		return nil, errors.New("the file's metadata has no hash to check the original against")
	}
	t := download.Target{FileID: it.FileID, Key: it.Key, Header: it.Header, Size: it.Size, Hash: it.Meta.Hash}
	if live {
		t.Hash = ""
	}
	f := &download.Fetcher{Client: r.o.Client, Policy: r.o.Policy}
	p, err := f.Fetch(ctx, t, work)
	if err != nil {
		return nil, fmt.Errorf("downloading the original: %w", err)
	}
	defer p.Discard()
	if p.HashMismatch {
		return nil, errors.New("the original does not match its hash")
	}
	if !live {
		return r.o.Tools.decodeFile(ctx, p.Path(), work, it.Meta.FileType)
	}
	res, err := livephoto.Unpack(p.Path(), work, download.TempPrefix)
	if err != nil {
		return nil, err
	}
	defer res.Remove()
	if res.Image == nil {
		return nil, fmt.Errorf("%w: the live photo's archive has no usable image", ErrUnsupported)
	}
	if want, _, ok := catalog.SplitLiveHash(it.Meta.Hash); !ok || !livephoto.HashMatches(want, res.Image.Hash) {
		return nil, errors.New("the live photo's image does not match its hash")
	}
	return r.o.Tools.decodeFile(ctx, res.Image.Path, work, 0)
}

// imageType is the file type to decode a local copy as: a live photo's
// saved first part is its image.
func imageType(fileType int) int {
	if fileType == 2 {
		return 0
	}
	return fileType
}
