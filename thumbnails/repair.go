package thumbnails

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/livephoto"
)

// repair makes a new thumbnail for c from its original, fits it to the
// size on record, and (unless a dry run) uploads, commits and reads it back.
func (r *run) repair(ctx context.Context, c *candidate, class Class) (Action, int64, error) {
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
	if c.base == nil {
		base, err := r.source(ctx, c)
		switch {
		case errors.Is(err, ErrUnsupported):
			return Unsupported, 0, err
		case err != nil:
			return Failed, 0, err
		}
		c.base = base
	}
	jpg, err := Fit(c.base, budget)
	if errors.Is(err, ErrTooLarge) {
		return TooLarge, 0, fmt.Errorf("%w (%d bytes)", err, budget)
	}
	if err != nil {
		return Failed, 0, err
	}
	size := encryptedSize(len(jpg))
	if class != Lost && class != Corrupt {
		if err := r.clearlyCloser(c, jpg); err != nil {
			return Kept, size, err
		}
	}
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
	if err := r.upload(ctx, c, header, enc, jpg); err != nil {
		return Failed, size, err
	}
	return Repaired, size, nil
}

// upload sends enc, jpg sealed under header, as c's thumbnail, and
// counts it done only once the server serves back what was uploaded.
func (r *run) upload(ctx context.Context, c *candidate, header, enc, jpg []byte) error {
	if err := Upload(ctx, r.o.Client, r.o.Policy, c.collectionID, c.item.FileID, header, enc); err != nil {
		return err
	}
	back, err := r.fetchThumbnail(ctx, c.item.FileID)
	if err != nil {
		return fmt.Errorf("committed, but reading the new thumbnail back failed: %w", err)
	}
	plain, err := secretstream.OpenBlob(c.item.Key, header, back)
	if err != nil {
		return fmt.Errorf("committed, but the thumbnail read back does not decrypt: %w", err)
	}
	if !bytes.Equal(plain, jpg) {
		return errors.New("committed, but the server serves another thumbnail")
	}
	return nil
}

// source is c's original as Ente's apps display it (EXIF orientation
// applied, a live photo's image, a video's frame), at most 720 px: all a
// thumbnail or a comparison needs. The full-size pixels are dropped at once.
func (r *run) source(ctx context.Context, c *candidate) (image.Image, error) {
	work, err := os.MkdirTemp(r.tmp, "file-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	img, err := r.original(ctx, c, work)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	if b.Dx() < 1 || b.Dy() < 1 {
		return nil, fmt.Errorf("%w: empty image", ErrUnsupported)
	}
	return scale(img, min(max(b.Dx(), b.Dy()), MaxSide)), nil
}

// content judges a thumbnail that decrypts (plain) against its original;
// for a video only blank and noise are judged, without the original.
// An original that cannot be read leaves the thumbnail unknown.
func (r *run) content(ctx context.Context, c *candidate, plain []byte) (Class, error) {
	thumb, err := Decode(bytes.NewReader(plain))
	if err != nil {
		return Corrupt, err
	}
	if c.item.Meta.FileType == 1 {
		class, _ := judge(thumb, nil)
		return class, nil
	}
	base, err := r.source(ctx, c)
	if err != nil {
		return Unknown, fmt.Errorf("content not checked: %w", err)
	}
	c.base = base
	class, far := judge(thumb, base)
	c.far = far
	return class, nil
}

// errNotCloser reports a thumbnail flagged by --check-content that quak
// leaves in place: the one it can make would not be clearly closer to the
// original.
var errNotCloser = errors.New("the thumbnail looks wrong, but the one quak can make is not clearly closer to the original")

// clearlyCloser accepts a new thumbnail (jpg) for a flagged one only when
// it is the original's picture and at most half as far from it as the old
// one, both measured on the same grid (apart).
func (r *run) clearlyCloser(c *candidate, jpg []byte) error {
	img, err := Decode(bytes.NewReader(jpg))
	if err != nil {
		return err
	}
	if c.item.Meta.FileType == 1 {
		if class, _ := judge(img, nil); class != OK {
			return errNotCloser
		}
		return nil
	}
	class, far := judge(img, c.base)
	if class != OK || 2*far > c.far {
		return errNotCloser
	}
	return nil
}

// original decodes c's original: the verified copy in --from's backup when
// there is one, else a download checked against Ente's hash exactly as
// backup checks it. A live photo gives its image part.
func (r *run) original(ctx context.Context, c *candidate, work string) (image.Image, error) {
	it := c.item
	live := catalog.IsLivePhoto(it.Meta)
	if r.from != nil {
		if path, ok := r.from.find(it); ok {
			// A live photo's saved first part is its image: only a video
			// (type 1) is read as one, anything else by its first bytes.
			return r.o.Tools.decodeFile(ctx, path, work, it.Meta.FileType)
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
	res, err := livephoto.Unpack(p.Path(), work)
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
