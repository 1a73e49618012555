package restore

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
)

// encryptFunc makes the ciphertext stream of src under key and header.
type encryptFunc func(key, header []byte, src io.Reader) (*secretstream.EncryptReader, error)

// partLength is a part of a multipart upload as Ente's web app sends it:
// five ciphertext chunks (UP.2).
const partLength = apiclient.PartLength

// multipartFrom is the ciphertext size from which an object goes in
// parts: a stream of five chunks or more, as Ente's web app decides.
const multipartFrom = 4*(secretstream.ChunkSize+secretstream.Overhead) + 1

// ErrChanged reports an original whose bytes are no longer those the
// backup saved: quak uploads nothing it cannot vouch for.
var ErrChanged = errors.New("the file no longer holds what the backup saved")

// measured is what one pass over an original's ciphertext learns: its
// size, MD5 (whole and by part) and, for the self-check, its first chunk
// and the plaintext it must open to.
type measured struct {
	size     int64
	sum      [md5.Size]byte
	partSums [][md5.Size]byte
	first    []byte // the first ciphertext chunk
	plain    []byte // the first plaintext chunk
}

// opener opens an import's original held in memory, from its start:
// each call gives the same bytes.
type opener func() (io.ReadCloser, error)

// plaintext is the path of what is uploaded for o: the file itself, or
// for a live photo an archive of its image and video made in the run's
// temp area (the same bytes every time), removed by done. For a live
// photo, src are its parts as the archive read them, each of which must
// be as want says when want is set (the journal's record). An import's
// original is never read from a path (measureMemory, memoryCiphertext).
func (r *run) plaintext(ctx context.Context, o *original, want []folder.SourceStat) (path string, src []folder.SourceStat, done func(), err error) {
	if len(o.parts) == 1 {
		return o.parts[0], nil, func() {}, nil
	}
	t, err := durable.CreateTemp(r.temp())
	if err != nil {
		return "", nil, nil, err
	}
	if src, err = writeLive(ctx, t.File(), o.parts, o.hashes, want); err != nil {
		t.Discard()
		return "", nil, nil, err
	}
	if err := t.File().Close(); err != nil {
		t.Discard()
		return "", nil, nil, err
	}
	return t.Name(), src, func() { _ = os.Remove(t.Name()) }, nil
}

// writeLive writes a live photo's archive as Ente's apps make it (UP.8):
// image.<ext> then video.<ext>, stored, no times, so the bytes depend on
// the parts alone. Each part must hash to want's (the backup's record) as
// it is copied, else the archive is refused with ErrChanged: what goes in
// is what was checked, read once. It returns the parts as read; with
// stats set, each must still be as it says.
func writeLive(ctx context.Context, w io.Writer, parts, want []string, stats []folder.SourceStat) ([]folder.SourceStat, error) {
	zw := zip.NewWriter(w)
	var src []folder.SourceStat
	for i, name := range []string{"image", "video"} {
		hw, err := zw.CreateHeader(liveHeader(name, parts[i]))
		if err != nil {
			return nil, err
		}
		var st *folder.SourceStat
		if len(stats) == len(parts) {
			st = &stats[i]
		}
		f, closeF, err := readPlain(ctx, parts[i], st)
		if err != nil {
			return nil, err
		}
		h := keys.NewHash()
		_, err = io.Copy(io.MultiWriter(hw, h), f)
		closeF()
		if err != nil {
			return nil, err
		}
		if keys.EncodeB64(h.Sum(nil)) != want[i] {
			return nil, fmt.Errorf("%s: %w", filepath.Base(parts[i]), ErrChanged)
		}
		src = append(src, f.was)
	}
	return src, zw.Close()
}

// liveHeader is the archive's entry for a live photo's part: stored, no
// time.
func liveHeader(name, part string) *zip.FileHeader {
	return &zip.FileHeader{Name: name + filepath.Ext(part), Method: zip.Store}
}

// liveOverhead is what a live photo's archive adds to its parts (whose
// sizes do not change it below 4 GiB): what the archive of two empty
// parts of the same names holds.
func liveOverhead(parts []string) int64 {
	var n countWriter
	zw := zip.NewWriter(&n)
	for i, name := range []string{"image", "video"} {
		if _, err := zw.CreateHeader(liveHeader(name, parts[i])); err != nil {
			return 0
		}
	}
	if zw.Close() != nil {
		return 0
	}
	return int64(n)
}

// countWriter counts what is written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// measure encrypts the plaintext at path under key and header once,
// keeping only its size, checksums and first chunk, and the file as it
// read it. With want set, the plaintext read must hash to it (the
// backup's record), else ErrChanged: the checksums the upload URLs pin
// are then of bytes that were checked in the same pass, never of a file
// changed after its check. A file that changes as it is read is a
// *ChangedError; ctx stops it.
func (r *run) measure(ctx context.Context, path string, key, header []byte, want string) (*measured, folder.SourceStat, error) {
	f, done, err := readPlain(ctx, path, nil)
	if err != nil {
		return nil, folder.SourceStat{}, err
	}
	defer done()
	m, err := r.measureFrom(ctx, f, filepath.Base(path), key, header, want, nil)
	if err != nil {
		return nil, folder.SourceStat{}, err
	}
	return m, f.was, nil
}

// measureFrom encrypts the plaintext src gives as measure does; name
// names the original in ErrChanged. first, when set, is the plaintext the
// caller holds (an import's original in memory), not copied again.
func (r *run) measureFrom(ctx context.Context, src io.Reader, name string, key, header []byte, want string, first []byte) (*measured, error) {
	plain := &capture{max: secretstream.ChunkSize}
	if first != nil {
		plain.max = 0 // the caller holds it
	}
	h := keys.NewHash()
	er, err := r.encrypt(key, header, io.TeeReader(src, io.MultiWriter(plain, h)))
	if err != nil {
		return nil, err
	}
	m, err := measureStream(ctx, er)
	if err != nil {
		return nil, err
	}
	if want != "" && keys.EncodeB64(h.Sum(nil)) != want {
		return nil, fmt.Errorf("%s: %w", name, ErrChanged)
	}
	m.plain = plain.b.Bytes()
	if first != nil {
		m.plain = first[:min(len(first), secretstream.ChunkSize)]
	}
	return m, nil
}

// measureStream reads a ciphertext stream to its end: its size, its MD5
// whole and by part, and its first chunk.
func measureStream(ctx context.Context, er io.Reader) (*measured, error) {
	m := &measured{}
	whole, part := md5.New(), md5.New()
	first := &capture{max: secretstream.ChunkSize + secretstream.Overhead}
	var inPart int64
	buf := make([]byte, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := er.Read(buf)
		for b := buf[:n]; len(b) > 0; {
			k := min(int64(len(b)), partLength-inPart)
			write(b[:k], whole, part, first)
			m.size, inPart, b = m.size+k, inPart+k, b[k:]
			if inPart == partLength {
				m.partSums, inPart = append(m.partSums, [md5.Size]byte(part.Sum(nil))), 0
				part.Reset()
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if inPart > 0 {
		m.partSums = append(m.partSums, [md5.Size]byte(part.Sum(nil)))
	}
	m.sum, m.first = [md5.Size]byte(whole.Sum(nil)), first.b.Bytes()
	return m, nil
}

func write(b []byte, ws ...io.Writer) {
	for _, w := range ws {
		_, _ = w.Write(b) // hashes and captures never fail
	}
}

// capture keeps the first max bytes written to it.
type capture struct {
	b   bytes.Buffer
	max int
}

func (c *capture) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
