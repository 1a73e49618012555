// Package download saves one Ente file: it fetches the encrypted object,
// decrypts and verifies it while it streams into a temp file beside its
// destination, and gives it its final name only once it is complete.
package download

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/retry"
)

// TempPrefix starts the name of every temp file quak writes; anything with
// it is a leftover of an interrupted run.
const TempPrefix = ".quak-tmp-"

// Target is one encrypted original to fetch.
type Target struct {
	FileID int64
	Key    []byte // the file key
	Header []byte // file.decryptionHeader
	// Size is the ciphertext size from info.fileSize, or -1 when the server
	// did not say (then the response's Content-Length is used, if any).
	Size int64
	// Hash is the metadata's hash (base64 BLAKE2b-512 of the plaintext), or
	// "" to skip the check (live photos are checked per part after unzipping).
	Hash string
}

// Fetcher downloads files through an API client with a retry policy.
type Fetcher struct {
	Client *apiclient.Client
	Policy retry.Policy
	// OnBytes, if set, hears of plaintext bytes as they are written (an
	// attempt that fails and is retried is counted again).
	OnBytes func(n int64)
	// TempFile creates the temp file in dir (default os.CreateTemp with
	// TempPrefix); tests make it fail as a full disk would.
	TempFile func(dir string) (*os.File, error)
}

// Partial is a downloaded, authenticated file in a temp file beside its
// destination, not yet under its final name.
type Partial struct {
	f    *os.File
	Size int64  // plaintext bytes
	Hash []byte // BLAKE2b-512 of the plaintext
	// HashMismatch: the stream authenticated, so this is what the uploader
	// encrypted, but not what its metadata claims. Keep it, and report it.
	HashMismatch bool
}

// Path is the temp file's path.
func (p *Partial) Path() string { return p.f.Name() }

// Fetch downloads t into a temp file in dir. The retried unit is the whole
// sequence: request, streamed decrypt, hashing and writing, and the checks
// that the stream ended with an authenticated FINAL chunk at the expected
// size. A hash mismatch is not an error and is not retried (see Partial).
// On error no temp file remains. Errors name the file id.
func (f *Fetcher) Fetch(ctx context.Context, t Target, dir string) (*Partial, error) {
	var p *Partial
	err := f.withRetry(ctx, func(ctx context.Context) error {
		var err error
		p, err = f.attempt(ctx, t, dir)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("file %d: %w", t.FileID, err)
	}
	return p, nil
}

func (f *Fetcher) withRetry(ctx context.Context, op func(context.Context) error) error {
	return retry.Do(ctx, f.Policy, op)
}

// attempt is one try of the whole sequence; it cleans up after itself.
func (f *Fetcher) attempt(ctx context.Context, t Target, dir string) (p *Partial, err error) {
	obj, err := f.Client.DownloadFile(ctx, t.FileID)
	if err != nil {
		return nil, err
	}
	defer obj.Body.Close()
	size := t.Size
	if size < 0 {
		size = obj.Length
	}
	r, err := secretstream.NewReader(t.Key, t.Header, obj.Body, size)
	if err != nil {
		return nil, err
	}
	create := f.TempFile
	if create == nil {
		create = func(dir string) (*os.File, error) { return os.CreateTemp(dir, TempPrefix+"*") }
	}
	tmp, err := create(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := keys.NewHash()
	w := io.MultiWriter(tmp, h)
	if f.OnBytes != nil {
		w = io.MultiWriter(w, progress(f.OnBytes))
	}
	n, err := r.WriteTo(w)
	if err != nil {
		return nil, err
	}
	p = &Partial{f: tmp, Size: n, Hash: h.Sum(nil)}
	if t.Hash != "" {
		p.HashMismatch = !hashEqual(t.Hash, p.Hash)
	}
	return p, nil
}

// progress reports the length of every write.
type progress func(int64)

func (p progress) Write(b []byte) (int, error) {
	p(int64(len(b)))
	return len(b), nil
}

func hashEqual(want string, got []byte) bool {
	w, err := keys.DecodeB64(want)
	return err == nil && bytes.Equal(w, got)
}

// HashOf is Ente's content hash (BLAKE2b-512) of everything r yields.
func HashOf(r io.Reader) ([]byte, error) {
	h := keys.NewHash()
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// Commit makes the file durable under final with the given mode: fsync,
// rename (replacing any file there), fsync of the folder, then mtime. Any
// error leaves no temp file.
func (p *Partial) Commit(final string, mode os.FileMode, mtime time.Time) error {
	if err := p.f.Chmod(mode); err != nil {
		p.Discard()
		return err
	}
	if err := p.f.Sync(); err != nil {
		p.Discard()
		return err
	}
	if err := p.f.Close(); err != nil {
		_ = os.Remove(p.f.Name())
		return err
	}
	if err := os.Rename(p.f.Name(), final); err != nil {
		_ = os.Remove(p.f.Name())
		return err
	}
	if err := SyncDir(filepath.Dir(final)); err != nil {
		return err
	}
	if !mtime.IsZero() {
		return os.Chtimes(final, mtime, mtime)
	}
	return nil
}

// Discard removes the temp file.
func (p *Partial) Discard() {
	_ = p.f.Close()
	_ = os.Remove(p.f.Name())
}

// SyncDir fsyncs a folder, so a rename in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// RemoveLeftovers deletes temp files that interrupted runs left under root
// and returns how many it removed.
func RemoveLeftovers(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), TempPrefix) {
			if err := os.Remove(path); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
