package restore

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// Routes of museum's upload-URL limit.
const (
	routeURL       = "POST /files/upload-url"
	routeMultipart = "POST /files/multipart-upload-url"
)

// mint gives ob an object key and checksummed URLs: one URL, or one per
// part from multipartFrom bytes on. A new key is harmless (museum removes
// an object never committed), so minting is retried freely. museum's
// limit of URLs a minute (429) costs no attempt: the window waits it out.
func (r *run) mint(ctx context.Context, ob *folder.Object, m *measured) error {
	route := routeFor(m.size)
	for {
		err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
			if err := r.urls.wait(ctx, route); err != nil {
				return err
			}
			err := r.mintOnce(ctx, route, ob, m)
			if rateLimited(err) {
				return &limited{err} // the window's to wait, not retry's
			}
			return err
		})
		var l *limited
		if !errors.As(err, &l) {
			if err == nil {
				r.urls.passed(route)
			}
			return quotaRefusal(err)
		}
		d, first, err := r.urls.refused(route, l.err)
		if err != nil {
			return err
		}
		if first {
			r.note(Event{Kind: Waiting, Wait: d, Err: l.err}, func(*Summary) {})
		}
	}
}

// routeFor is the upload-URL route of an object of size bytes: in parts
// from multipartFrom on.
func routeFor(size int64) string {
	if size >= multipartFrom {
		return routeMultipart
	}
	return routeURL
}

// mintOnce asks once for ob's URLs on route.
func (r *run) mintOnce(ctx context.Context, route string, ob *folder.Object, m *measured) error {
	if route == routeURL {
		u, err := r.o.Target.Client.UploadURL(ctx, m.size, m.sum)
		if err == nil {
			ob.ObjectKey, ob.URL = u.ObjectKey, u.URL
		}
		return err
	}
	mu, err := r.o.Target.Client.MultipartUploadURL(ctx, m.size, partLength, m.partSums)
	if err == nil {
		ob.ObjectKey = mu.ObjectKey
		ob.Parts = &folder.Parts{Length: partLength, URLs: mu.PartURLs, CompleteURL: mu.CompleteURL,
			ETags: make([]string, len(mu.PartURLs)), MD5s: sums(m.partSums)}
	}
	return err
}

// limited carries a 429 out of retry.Do, which would spend attempts on it.
type limited struct{ err error }

func (l *limited) Error() string { return l.err.Error() }

// rateLimited reports museum's 429.
func rateLimited(err error) bool {
	var ae *errs.ApiError
	return errors.As(err, &ae) && ae.Status == 429
}

func sums(ss [][md5.Size]byte) []apiclient.B64 {
	out := make([]apiclient.B64, len(ss))
	for i, s := range ss {
		out[i] = s[:]
	}
	return out
}

// sendThumb puts the thumbnail's ciphertext, kept in the journal, to its
// pinned URL: repeating it with the same bytes is harmless.
func (r *run) sendThumb(ctx context.Context, in *folder.Intent) error {
	if in.Thumb.Sent {
		return nil
	}
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		_, err := r.o.Target.Client.PutUpload(ctx, in.Thumb.URL, bytes.NewReader(in.Thumb.Data), in.Thumb.Size, [md5.Size]byte(in.Thumb.MD5))
		return err
	})
	if err != nil {
		return fmt.Errorf("uploading its thumbnail: %w", err)
	}
	r.note(Event{}, func(s *Summary) { s.ThumbBytes += in.Thumb.Size })
	in.Thumb.Sent = true
	return r.j.PutIntent(in)
}

// sendFile puts the original's ciphertext, made again from the journal's
// key and header (the same bytes: the URL's checksum refuses others), in
// one PUT or part by part.
func (r *run) sendFile(ctx context.Context, in *folder.Intent, s *source) error {
	if in.File.Sent {
		return nil
	}
	if in.File.Parts != nil {
		return r.sendParts(ctx, in, s)
	}
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		src, closeSrc, err := s.ciphertext(ctx)
		if err != nil {
			return err
		}
		defer closeSrc()
		_, err = r.o.Target.Client.PutUpload(ctx, in.File.URL, src, in.File.Size, [md5.Size]byte(in.File.MD5))
		return err
	})
	if err != nil {
		return fmt.Errorf("uploading it: %w", err)
	}
	r.addBytes(in.File.Size)
	in.File.Sent = true
	return r.j.PutIntent(in)
}

// source is an original's plaintext for the sends of its intent: made
// (a live photo's archive) the first time a send needs it, from parts
// that must still be as the intent recorded them.
type source struct {
	r    *run
	o    *original
	in   *folder.Intent
	path string
	done func()
}

// ciphertext opens the original's ciphertext stream again: a
// *ChangedError when the source is not what was encrypted, or changes as
// it is read. An import's original is read from memory.
func (s *source) ciphertext(ctx context.Context) (io.Reader, func(), error) {
	if s.o.src != nil {
		return s.r.memoryCiphertext(s.o, s.in)
	}
	if s.done == nil {
		path, _, done, err := s.r.plaintext(ctx, s.o, s.in.Src)
		if err != nil {
			return nil, nil, err
		}
		s.path, s.done = path, done
	}
	var want *folder.SourceStat
	if len(s.o.parts) == 1 && len(s.in.Src) == 1 {
		want = &s.in.Src[0]
	}
	f, closeF, err := readPlain(ctx, s.path, want)
	if err != nil {
		return nil, nil, err
	}
	er, err := s.r.encrypt(s.in.FileKey, s.in.File.Header, f)
	if err != nil {
		closeF()
		return nil, nil, err
	}
	return er, closeF, nil
}

// close removes what ciphertext made.
func (s *source) close() {
	if s.done != nil {
		s.done()
	}
}

// sendParts puts each part not yet sent, recording its ETag as it is
// answered, then completes the upload once: a completion is not
// repeatable (UP.2), so a lost answer counts as done and POST /files tells.
func (r *run) sendParts(ctx context.Context, in *folder.Intent, s *source) error {
	src, closeSrc, err := s.ciphertext(ctx)
	if err != nil {
		return err
	}
	defer closeSrc()
	p := in.File.Parts
	buf := make([]byte, p.Length)
	for i := range p.URLs {
		n, err := io.ReadFull(src, buf[:min(p.Length, in.File.Size-int64(i)*p.Length)])
		if err != nil {
			return err
		}
		// A part sent before must be the one made now: the file was
		// changed in between otherwise.
		if sum := md5.Sum(buf[:n]); p.ETags[i] != "" && !bytes.Equal(p.MD5s[i], sum[:]) {
			return fmt.Errorf("part %d: %w", i+1, ErrChanged)
		}
		if p.ETags[i] != "" {
			continue
		}
		err = retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
			etag, err := r.o.Target.Client.PutUpload(ctx, p.URLs[i], bytes.NewReader(buf[:n]), int64(n), [md5.Size]byte(p.MD5s[i]))
			p.ETags[i] = etag
			return err
		})
		if err != nil {
			return fmt.Errorf("uploading part %d: %w", i+1, err)
		}
		r.addBytes(int64(n))
		if err := r.j.PutIntent(in); err != nil {
			return err
		}
	}
	return r.completeParts(ctx, in)
}

// completeParts completes a multipart upload whose parts are all sent, once.
func (r *run) completeParts(ctx context.Context, in *folder.Intent) error {
	p := in.File.Parts
	err := r.o.Target.Client.CompleteMultipart(ctx, p.CompleteURL, p.ETags)
	if err != nil && !retry.Unreachable(err) && !notFound(err) {
		return fmt.Errorf("completing its upload: %w", err)
	}
	// Completed, or perhaps (an answer lost, or a completion repeated
	// after a crash): POST /files finds out.
	in.File.Sent = true
	return r.j.PutIntent(in)
}

// notFound reports the store's 404: a completion repeated (NoSuchUpload).
func notFound(err error) bool {
	var ae *errs.ApiError
	return errors.As(err, &ae) && ae.Status == 404
}
