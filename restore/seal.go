package restore

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/thumbnails"
)

// sealed is an original encrypted for its upload, not yet given object keys.
type sealed struct {
	key, header []byte
	m           *measured
	thumb       []byte // plaintext JPEG
	nf          apiclient.NewFile
	md          []byte // plaintext metadata JSON
	home        *catalog.Album
	src         []folder.SourceStat // the source's parts as encrypted
}

// seal encrypts an original for its home album, checks its own
// ciphertext, mints the objects' upload URLs and records the intent with
// the complete POST /files body in the journal: nothing of the file is
// sent before the journal holds it.
func (r *run) seal(ctx context.Context, o *original) (*folder.Intent, error) {
	home, err := r.album(ctx, r.plan.albums[r.plan.home(o)])
	if err != nil {
		return nil, err
	}
	s, err := r.encryptOriginal(ctx, o, home)
	if err != nil {
		return nil, err
	}
	if err := selfCheck(s); err != nil {
		return nil, err
	}
	in := &folder.Intent{Source: o.rec.ID, Hash: o.hash(), FileType: o.rec.Meta.FileType, Title: o.rec.Meta.Title, FileKey: s.key, Album: home.ID,
		File: folder.Object{Header: s.header, Size: s.m.size, MD5: s.m.sum[:]}, Src: s.src}
	if err := r.mint(ctx, &in.File, s.m); err != nil {
		return nil, err
	}
	if err := r.finishIntent(ctx, s, in); err != nil {
		return nil, err
	}
	return in, nil
}

// finishIntent seals the thumbnail, mints its URL and records in with the
// whole POST /files body, in.File's object key minted already.
func (r *run) finishIntent(ctx context.Context, s *sealed, in *folder.Intent) error {
	thumbCT, err := secretstream.SealBlob(s.key, s.nf.Thumbnail.DecryptionHeader, s.thumb)
	if err != nil {
		return err
	}
	tsum := md5.Sum(thumbCT)
	in.Thumb = folder.Object{Header: s.nf.Thumbnail.DecryptionHeader, Data: thumbCT, Size: int64(len(thumbCT)), MD5: tsum[:]}
	if err := r.mint(ctx, &in.Thumb, &measured{size: in.Thumb.Size, sum: tsum, partSums: [][md5.Size]byte{tsum}}); err != nil {
		return err
	}
	s.nf.File = apiclient.UploadedObject{ObjectKey: in.File.ObjectKey, DecryptionHeader: s.header, Size: s.m.size}
	s.nf.Thumbnail.ObjectKey, s.nf.Thumbnail.Size = in.Thumb.ObjectKey, in.Thumb.Size
	if in.Body, err = s.nf.Body(); err != nil {
		return err
	}
	return r.j.PutIntent(in)
}

// encryptOriginal makes everything of o's upload but its object keys:
// the ciphertext's measure, the thumbnail, the sealed file key, metadata
// and magic metadata.
func (r *run) encryptOriginal(ctx context.Context, o *original, home *catalog.Album) (*sealed, error) {
	s := &sealed{home: home}
	var err error
	if s.key, err = keys.NewKey(r.o.Rand); err != nil {
		return nil, err
	}
	if s.header, err = secretstream.NewHeader(r.o.Rand); err != nil {
		return nil, err
	}
	want := "" // a live photo's parts were checked as its archive was made
	if len(o.hashes) == 1 {
		want = o.hashes[0]
	}
	if o.src != nil {
		s.m, err = r.measureMemory(ctx, o, s.key, s.header, want)
	} else {
		s.m, s.src, err = r.measureFile(ctx, o, s.key, s.header, want)
	}
	if err != nil {
		return nil, err
	}
	placeholder := false
	if s.thumb, placeholder, err = r.thumbnail(ctx, o); err != nil {
		return nil, err
	}
	return s, r.sealFields(s, o, placeholder)
}

// measureFile measures o's plaintext read from its files, and answers
// its parts as it read them.
func (r *run) measureFile(ctx context.Context, o *original, key, header []byte, want string) (*measured, []folder.SourceStat, error) {
	path, src, done, err := r.plaintext(ctx, o, nil)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	m, st, err := r.measure(ctx, path, key, header, want)
	if err != nil {
		return nil, nil, err
	}
	if src == nil {
		src = []folder.SourceStat{st}
	}
	return m, src, nil
}

// sealFields seals what goes with an original's ciphertext: its key under
// the home album's, the thumbnail's header, the metadata and the public
// and private magic metadata.
func (r *run) sealFields(s *sealed, o *original, placeholder bool) error {
	home := s.home
	var err error
	s.nf.CollectionID = home.ID
	if s.nf.EncryptedKey, s.nf.KeyDecryptionNonce, err = keys.SecretboxSealFresh(r.o.Rand, s.key, home.Key); err != nil {
		return err
	}
	if s.nf.Thumbnail.DecryptionHeader, err = secretstream.NewHeader(r.o.Rand); err != nil {
		return err
	}
	if s.md, err = metadataJSON(o, placeholder); err != nil {
		return err
	}
	if s.nf.Metadata.EncryptedData, s.nf.Metadata.DecryptionHeader, err = secretstream.EncryptBlob(r.o.Rand, s.key, s.md); err != nil {
		return err
	}
	if s.nf.PubMagicMetadata, err = catalog.SealMagic(r.o.Rand, s.key, 1, publicFields(o)); err != nil {
		return err
	}
	s.nf.MagicMetadata, err = catalog.SealMagic(r.o.Rand, s.key, 1, privateFields(o))
	return err
}

// thumbnail renders o's thumbnail as Ente's web app would (from the image
// of a live photo), or answers Ente's placeholder and true when no tool
// can read the original (a video without ffmpeg, say).
func (r *run) thumbnail(ctx context.Context, o *original) ([]byte, bool, error) {
	tmp, err := os.MkdirTemp(r.temp(), "thumb-")
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ft := o.rec.Meta.FileType
	if catalog.IsLivePhoto(o.rec.Meta) {
		ft = 0
	}
	jpg, err := r.makeThumbnail(ctx, o, tmp, ft)
	if err == nil {
		return jpg, false, nil
	}
	if !errors.Is(err, thumbnails.ErrUnsupported) && !errors.Is(err, thumbnails.ErrTooLarge) {
		return nil, false, fmt.Errorf("making its thumbnail: %w", err)
	}
	r.note(Event{Kind: Placeholder, Source: o.rec.ID, Title: o.rec.Meta.Title, Err: err}, func(s *Summary) { s.Placeholders++ })
	return thumbnails.PlaceholderJPEG(), true, nil
}
