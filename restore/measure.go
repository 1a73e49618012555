package restore

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/secretstream"
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

// opener opens what is uploaded for an original, from its start: each
// call gives the same bytes.
type opener func() (io.ReadCloser, error)

// plaintext opens what is uploaded for o: the file itself, or for a live
// photo an archive of its image and video made in the temp area (the same
// bytes every time), removed by done; an import's original held in memory
// is read from there.
func (r *run) plaintext(o *original) (open opener, done func(), err error) {
	if o.mem != nil {
		return o.memory(), func() {}, nil
	}
	if o.src != nil {
		// Its bytes went past already: what still needs them waits for
		// the next run, which reads them again.
		return func() (io.ReadCloser, error) { return nil, errNoBytes }, func() {}, nil
	}
	if len(o.parts) == 1 {
		return fileOpener(o.parts[0]), func() {}, nil
	}
	t, err := durable.CreateTemp(r.temp())
	if err != nil {
		return nil, nil, err
	}
	if err := writeLive(t.File(), o.parts, o.hashes); err != nil {
		t.Discard()
		return nil, nil, err
	}
	if err := t.File().Close(); err != nil {
		t.Discard()
		return nil, nil, err
	}
	return fileOpener(t.Name()), func() { _ = os.Remove(t.Name()) }, nil
}

func fileOpener(path string) opener {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

// writeLive writes a live photo's archive as Ente's apps make it (UP.8):
// image.<ext> then video.<ext>, stored, no times, so the bytes depend on
// the parts alone. Each part must hash to want's (the backup's record) as
// it is copied, else the archive is refused with ErrChanged: what goes in
// is what was checked, read once.
func writeLive(w io.Writer, parts, want []string) error {
	zw := zip.NewWriter(w)
	for i, name := range []string{"image", "video"} {
		hw, err := zw.CreateHeader(&zip.FileHeader{Name: name + filepath.Ext(parts[i]), Method: zip.Store})
		if err != nil {
			return err
		}
		f, err := os.Open(parts[i])
		if err != nil {
			return err
		}
		h := keys.NewHash()
		_, err = io.Copy(io.MultiWriter(hw, h), f)
		_ = f.Close()
		if err != nil {
			return err
		}
		if keys.EncodeB64(h.Sum(nil)) != want[i] {
			return fmt.Errorf("%s: %w", filepath.Base(parts[i]), ErrChanged)
		}
	}
	return zw.Close()
}

// measure encrypts the plaintext open gives under key and header once,
// keeping only its size, checksums and first chunk. With want set, the
// plaintext read must hash to it (the backup's record), else ErrChanged:
// the checksums the upload URLs pin are then of bytes that were checked in
// the same pass, never of a file changed after its check. name names the
// original in that error. first, when set, is the plaintext the caller
// holds (an import's original in memory), not copied again.
func (r *run) measure(open opener, name string, key, header []byte, want string, first []byte) (*measured, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	plain := &capture{max: secretstream.ChunkSize}
	if first != nil {
		plain.max = 0 // the caller holds it
	}
	h := keys.NewHash()
	er, err := r.encrypt(key, header, io.TeeReader(f, io.MultiWriter(plain, h)))
	if err != nil {
		return nil, err
	}
	m, err := measureStream(er)
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
func measureStream(er io.Reader) (*measured, error) {
	m := &measured{}
	whole, part := md5.New(), md5.New()
	first := &capture{max: secretstream.ChunkSize + secretstream.Overhead}
	var inPart int64
	buf := make([]byte, 256<<10)
	for {
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
