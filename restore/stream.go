package restore

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

// routePlainMultipart is the upload-URL route of a multipart upload whose
// URLs pin nothing.
const routePlainMultipart = "GET /files/multipart-upload-urls"

// stream imports an original too large to hold (one part over memoryMax)
// in the one pass its source reads it in: hashed, encrypted and sent part
// by part as it streams past, to a multipart upload whose URLs pin no
// checksum (none can be known before the bytes are read: each part is
// still sent with its own, which the store checks). Only once the whole
// file is read is its hash known; then it is committed, unless the target
// has that content already (Ente's phone app uploaded it): the object sent
// is then left uncommitted, and museum removes it within 14 days. One whose
// title, type and size match a file of the target is hashed first and read
// again (ErrReadAgain) only when it proves to be new, so that a file the
// account has is not sent for nothing.
func (im *importer) stream(ctx context.Context, o *original, src io.Reader) error {
	held := min(streamMemory, im.memory)
	if err := im.budget.Acquire(ctx, held); err != nil {
		return err
	}
	defer im.budget.Release(held)
	if o.hash() == "" && im.r.likelyPresent(o) {
		return im.hashFirst(ctx, o, src)
	}
	err := im.streamUpload(ctx, o, src)
	var se *SourceError
	if errors.As(err, &se) {
		return err
	}
	im.settle(ctx, o, err)
	return nil
}

// hashFirst reads an original only to hash it: added to its albums when
// the target has it, asked for again when not.
func (im *importer) hashFirst(ctx context.Context, o *original, src io.Reader) error {
	h := keys.NewHash()
	n, err := io.Copy(h, src)
	if err != nil {
		return err
	}
	if n != o.src.Parts[0].Size {
		return &SourceError{Where: o.src.Where, Err: fmt.Errorf("%d bytes, not %d", n, o.src.Parts[0].Size)}
	}
	o.hashes, o.rec.Meta = []string{keys.EncodeB64(h.Sum(nil))}, metaOf(o.src)
	im.remember(o)
	if im.r.tgt.file(contentKey(o.hash(), o.src.FileType, o.src.Title)) != nil {
		im.settle(ctx, o, im.r.one(ctx, o))
		return nil
	}
	return ErrReadAgain
}

// streamUpload sends an original as it is read, then commits it through
// one, which finds the target's copy of it first if there is one.
func (im *importer) streamUpload(ctx context.Context, o *original, src io.Reader) error {
	r := im.r
	in, err := r.j.Intent(o.rec.ID)
	if err != nil {
		return err
	}
	if in == nil || in.File.Parts == nil && !in.File.Sent {
		if in, err = im.streamIntent(ctx, o); err != nil {
			return err
		}
	}
	sink := &thumbSink{tools: r.o.Tools, dir: r.temp(), fileType: o.src.FileType}
	defer sink.remove()
	h := keys.NewHash()
	tee := io.TeeReader(src, io.MultiWriter(h, sink))
	if err := im.sendStream(ctx, in, tee); err != nil {
		return err
	}
	hash := keys.EncodeB64(h.Sum(nil))
	if o.src.Hash != "" && hash != o.src.Hash {
		return fmt.Errorf("%w since the Takeout was first read", ErrChanged)
	}
	o.hashes, o.rec.Meta = []string{hash}, metaOf(o.src)
	im.remember(o)
	if r.tgt.file(contentKey(hash, o.src.FileType, o.src.Title)) == nil && !hasBody(in) {
		if err := im.sealStream(ctx, o, in, sink); err != nil {
			return err
		}
	}
	return r.one(ctx, o)
}

// streamIntent records a new upload for a streamed original: its key and
// header, and a multipart upload of as many parts as its ciphertext
// (known from its size) makes.
func (im *importer) streamIntent(ctx context.Context, o *original) (*folder.Intent, error) {
	r := im.r
	home, err := r.album(ctx, r.plan.albums[r.plan.home(o)])
	if err != nil {
		return nil, err
	}
	key, err := keys.NewKey(r.o.Rand)
	if err != nil {
		return nil, err
	}
	header, err := secretstream.NewHeader(r.o.Rand)
	if err != nil {
		return nil, err
	}
	size := secretstream.CiphertextSize(o.src.Parts[0].Size)
	n := int((size + partLength - 1) / partLength)
	var mu *apiclient.MultipartUpload
	err = retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		if err := r.urls.wait(ctx, routePlainMultipart); err != nil {
			return err
		}
		var err error
		mu, err = r.o.Target.Client.PlainMultipartUploadURLs(ctx, n)
		return err
	})
	if err != nil {
		return nil, quotaRefusal(err)
	}
	in := &folder.Intent{Source: o.rec.ID, FileType: o.src.FileType, Title: o.src.Title, FileKey: key, Album: home.ID,
		File: folder.Object{Header: header, Size: size, ObjectKey: mu.ObjectKey,
			Parts: &folder.Parts{Length: partLength, URLs: mu.PartURLs, CompleteURL: mu.CompleteURL,
				MD5s: make([]apiclient.B64, n), ETags: make([]string, n)}}}
	return in, r.j.PutIntent(in)
}

// sendStream encrypts what plain gives under the intent's key and header
// and sends it part by part, each with its MD5, recording each part's ETag
// as it is answered, then completes the upload. A part an earlier attempt
// sent is sent again only when it differs now. The first chunk is opened
// again before anything is sent: museum keeps junk for good.
func (im *importer) sendStream(ctx context.Context, in *folder.Intent, plain io.Reader) error {
	r := im.r
	first := &capture{max: secretstream.ChunkSize}
	er, err := r.encrypt(in.FileKey, in.File.Header, io.TeeReader(plain, first))
	if err != nil {
		return err
	}
	p := in.File.Parts
	buf := partBuffer(p.Length)
	defer partBuffers.Put(&buf)
	for i := range p.URLs {
		n, err := io.ReadFull(er, buf[:min(p.Length, in.File.Size-int64(i)*p.Length)])
		if err != nil {
			return err
		}
		if i == 0 {
			if err := checkFirstChunk(in, buf[:n], first.b.Bytes()); err != nil {
				return err
			}
		}
		if in.File.Sent {
			continue // completed by an earlier run: only the hash was wanted
		}
		if err := im.sendStreamPart(ctx, in, i, buf[:n]); err != nil {
			return err
		}
	}
	if n, _ := er.Read(buf[:1]); n > 0 {
		return fmt.Errorf("longer than its %d bytes", in.File.Size)
	}
	if in.File.Sent {
		return nil
	}
	return r.completeParts(ctx, in)
}

// sendStreamPart puts part i unless an earlier attempt put these bytes.
func (im *importer) sendStreamPart(ctx context.Context, in *folder.Intent, i int, b []byte) error {
	r, p := im.r, in.File.Parts
	sum := md5.Sum(b)
	if p.ETags[i] != "" && bytes.Equal(p.MD5s[i], sum[:]) {
		return nil
	}
	var etag string
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		var err error
		etag, err = r.o.Target.Client.PutUpload(ctx, p.URLs[i], bytes.NewReader(b), int64(len(b)), sum)
		return err
	})
	if err != nil {
		return fmt.Errorf("uploading part %d: %w", i+1, err)
	}
	p.MD5s[i], p.ETags[i] = sum[:], etag
	r.addBytes(int64(len(b)))
	return r.j.PutIntent(in)
}

// checkFirstChunk opens the first ciphertext chunk about to be sent and
// compares it with the plaintext it was made of.
func checkFirstChunk(in *folder.Intent, ct, plain []byte) error {
	chunk := ct[:min(len(ct), secretstream.ChunkSize+secretstream.Overhead)]
	rd, err := secretstream.NewReader(in.FileKey, in.File.Header, bytes.NewReader(chunk), in.File.Size)
	if err == nil {
		got := make([]byte, len(plain))
		if _, err = io.ReadFull(rd, got); err == nil && !bytes.Equal(got, plain) {
			err = errors.New("it opens to other bytes")
		}
	}
	if err != nil {
		return fmt.Errorf("refusing to upload: its original does not open as sent: %w", err)
	}
	return nil
}

// sealStream makes the rest of a streamed original's upload once it is
// read: its thumbnail (from the copy the sink kept, or Ente's
// placeholder), metadata and POST /files body, recorded in its intent.
func (im *importer) sealStream(ctx context.Context, o *original, in *folder.Intent, sink *thumbSink) error {
	r := im.r
	home := r.tgt.byID(in.Album)
	if home == nil {
		return fmt.Errorf("its album %d is no longer in the target", in.Album)
	}
	s := &sealed{key: in.FileKey, header: in.File.Header, home: home.Album, m: &measured{size: in.File.Size}}
	sink.finish()
	placeholder := false
	var err error
	if s.thumb, placeholder, err = im.streamThumbnail(ctx, o, sink); err != nil {
		return err
	}
	if err := r.sealFields(s, o, placeholder); err != nil {
		return err
	}
	if err := selfCheck(s); err != nil {
		return err
	}
	in.Hash = o.hash()
	return r.finishIntent(ctx, s, in)
}

// streamThumbnail renders a streamed original's thumbnail from the copy
// its sink kept, or answers Ente's placeholder when there is none.
func (im *importer) streamThumbnail(ctx context.Context, o *original, sink *thumbSink) ([]byte, bool, error) {
	r := im.r
	if sink.path != "" && sink.err == nil {
		tmp, err := os.MkdirTemp(r.temp(), "thumb-")
		if err != nil {
			return nil, false, err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		r.thumbMu.Lock()
		jpg, err := r.o.Tools.Make(ctx, sink.path, tmp, o.src.FileType)
		r.thumbMu.Unlock()
		if err == nil {
			return jpg, false, nil
		}
		if !errors.Is(err, thumbnails.ErrUnsupported) && !errors.Is(err, thumbnails.ErrTooLarge) {
			return nil, false, fmt.Errorf("making its thumbnail: %w", err)
		}
	}
	err := sink.err
	if err == nil {
		err = fmt.Errorf("%w: no tool on PATH reads it", thumbnails.ErrUnsupported)
	}
	r.note(Event{Kind: Placeholder, Source: o.rec.ID, Title: o.rec.Meta.Title, Where: o.src.Where, Err: err}, func(s *Summary) { s.Placeholders++ })
	return thumbnails.PlaceholderJPEG(), true, nil
}

// thumbSink keeps a copy of a streamed original for the tool that makes
// its thumbnail, in the import's temp folder, only when one can: it looks
// at the first bytes before it writes any.
type thumbSink struct {
	tools    *thumbnails.Tools
	dir      string
	fileType int
	head     []byte
	decided  bool
	f        *os.File
	path     string
	err      error // why no copy could be kept
}

const thumbHead = 128 << 10

// Write takes the next bytes of the original; it never fails: a copy it
// cannot write is only a thumbnail the less.
func (t *thumbSink) Write(p []byte) (int, error) {
	n := len(p)
	if !t.decided {
		k := min(len(p), thumbHead-len(t.head))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
		if len(t.head) < thumbHead {
			return n, nil
		}
		t.decide()
	}
	t.write(p)
	return n, nil
}

// finish decides for a file shorter than the head, and closes the copy.
func (t *thumbSink) finish() {
	if !t.decided {
		t.decide()
	}
	if t.f != nil {
		if err := t.f.Close(); err != nil && t.err == nil {
			t.err = err
		}
	}
}

func (t *thumbSink) decide() {
	t.decided = true
	if !t.tools.Readable(t.head, t.fileType) {
		return
	}
	f, err := os.CreateTemp(t.dir, "stream-*")
	if err != nil {
		t.err = err
		return
	}
	t.f, t.path = f, f.Name()
	t.write(t.head)
	t.head = nil
}

func (t *thumbSink) write(p []byte) {
	if t.f == nil || t.err != nil {
		return
	}
	if _, err := t.f.Write(p); err != nil {
		t.err = err
	}
}

// remove deletes the copy.
func (t *thumbSink) remove() {
	if t.f != nil {
		_ = t.f.Close()
		_ = os.Remove(t.path)
	}
}

// partBuffers keeps the buffers of parts being sent, for the next stream.
var partBuffers sync.Pool

func partBuffer(n int64) []byte {
	if b, ok := partBuffers.Get().(*[]byte); ok && int64(cap(*b)) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}
