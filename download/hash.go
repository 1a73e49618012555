package download

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/quak-photos/quak/apiclient/keys"
)

// HashOf is Ente's content hash (BLAKE2b-512) of everything r yields.
func HashOf(r io.Reader) ([]byte, error) {
	h := keys.NewHash()
	if _, err := io.Copy(h, r); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// HashFileContext is HashFile, stopping when ctx ends: hashing a long
// file ends with the run.
func HashFileContext(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return HashOf(ContextReader(ctx, f))
}

// ContextReader reads r until ctx ends, then answers ctx's error: a long
// copy or hash stops with the run.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// HashFile is Ente's content hash of the file at path.
func HashFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return HashOf(f)
}

// hashEqual reports whether got is the hash want (base64) names.
func hashEqual(want string, got []byte) bool {
	w, err := keys.DecodeB64(want)
	return err == nil && bytes.Equal(w, got)
}
