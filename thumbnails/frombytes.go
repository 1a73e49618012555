package thumbnails

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MakeBytes renders the thumbnail Ente's web app would upload for an
// original held in memory, b, named name (for its extension): from the
// bytes when Go decodes them, else through the tool that reads it, given a
// copy of b written in tmp (a private temp folder) and removed after.
// Errors are Make's; ErrUnsupported comes before anything is written when
// no tool on PATH reads the original.
func (t Tools) MakeBytes(ctx context.Context, b []byte, name, tmp string, fileType int) ([]byte, error) {
	head := b[:min(len(b), 128<<10)]
	kind, err := sniff(head, fileType)
	if err != nil {
		return nil, err
	}
	if kind == kindGo {
		img, err := Decode(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return Fit(orient(img, jpegOrientation(head)), uploadBudget)
	}
	if err := t.canRun(kind); err != nil {
		return nil, err
	}
	path := filepath.Join(tmp, "original"+strings.ToLower(filepath.Ext(name)))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(path) }()
	return t.Make(ctx, path, tmp, fileType)
}

// Readable reports whether a thumbnail can be made of a file whose first
// bytes are head: Go decodes it, or the tool it needs is on PATH. An
// original streamed past once is kept in a temp file for Make only then.
func (t Tools) Readable(head []byte, fileType int) bool {
	kind, err := sniff(head, fileType)
	return err == nil && (kind == kindGo || t.canRun(kind) == nil)
}

// canRun reports ErrUnsupported when the tool a kind of file needs is not
// on PATH.
func (t Tools) canRun(kind sourceKind) error {
	names := heifConverters
	if kind == kindVideo {
		names = []string{"ffmpeg"}
	}
	for _, n := range names {
		if _, err := t.LookPath(n); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: needs %s on PATH", ErrUnsupported, strings.Join(names, " or "))
}
