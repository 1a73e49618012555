package restore

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strconv"

	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
)

// memory opens an import's original held in memory: its one part, or a
// live photo's archive made from its two as it is read.
func (o *original) memory() opener {
	if len(o.mem) == 1 {
		return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(o.mem[0])), nil }
	}
	return func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLiveBytes(pw, o.src.Parts, o.mem)) }()
		return pr, nil
	}
}

// writeLiveBytes writes a live photo's archive as writeLive does, from
// parts held in memory.
func writeLiveBytes(w io.Writer, parts []Part, mem [][]byte) error {
	zw := zip.NewWriter(w)
	for i, name := range []string{"image", "video"} {
		hw, err := zw.CreateHeader(&zip.FileHeader{Name: name + filepath.Ext(parts[i].Name), Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := hw.Write(mem[i]); err != nil {
			return err
		}
	}
	return zw.Close()
}

// measureMemory measures an import's original as measure does, from
// its bytes held in memory: errNoBytes once they went past.
func (r *run) measureMemory(ctx context.Context, o *original, key, header []byte, want string) (*measured, error) {
	if o.mem == nil {
		return nil, errNoBytes
	}
	src, err := o.memory()()
	if err != nil {
		return nil, err
	}
	defer func() { _ = src.Close() }()
	var first []byte
	if len(o.mem) == 1 {
		first = o.mem[0]
	}
	return r.measureFrom(ctx, src, o.name(), key, header, want, first)
}

// memoryCiphertext opens the ciphertext of an import's original from its
// bytes held in memory: errNoBytes once they went past, and the next run
// reads them again.
func (r *run) memoryCiphertext(o *original, in *folder.Intent) (io.Reader, func(), error) {
	if o.mem == nil {
		return nil, nil, errNoBytes
	}
	src, err := o.memory()()
	if err != nil {
		return nil, nil, err
	}
	er, err := r.encrypt(in.FileKey, in.File.Header, src)
	if err != nil {
		_ = src.Close()
		return nil, nil, err
	}
	return er, func() { _ = src.Close() }, nil
}

// name names an original in an error: its file's name, or where an
// import's source holds it.
func (o *original) name() string {
	if o.src != nil {
		return o.src.Where
	}
	return filepath.Base(o.parts[0])
}

// where is where an import's original is in its source, "" for a restore's.
func (o *original) where() string {
	if o.src != nil {
		return o.src.Where
	}
	return ""
}

// makeThumbnail renders o's thumbnail: from its file, or from the bytes of
// an import's original held in memory (one at a time).
func (r *run) makeThumbnail(ctx context.Context, o *original, tmp string, fileType int) ([]byte, error) {
	if o.mem == nil {
		return r.o.Tools.Make(ctx, o.parts[0], tmp, fileType)
	}
	r.thumbMu.Lock()
	defer r.thumbMu.Unlock()
	return r.o.Tools.MakeBytes(ctx, o.mem[0], o.src.Parts[0].Name, tmp, fileType)
}

// temp is the folder of the run's temp files.
func (r *run) temp() string { return r.tmp }

// sizeKey names a file by title, type and ciphertext size.
func sizeKey(title string, fileType int, size int64) string {
	return strconv.Itoa(fileType) + "/" + strconv.FormatInt(size, 10) + "/" + title
}

// likelyPresent reports an import's original of unknown hash that the
// target has a file of the same title, type and size as: most likely
// itself (uploaded by Ente's phone app, say). It is hashed before any of it
// is uploaded, and the storage check does not count it.
func (r *run) likelyPresent(o *original) bool {
	if o.src == nil || o.hash() != "" || len(o.src.Parts) != 1 {
		return false
	}
	r.tgt.mu.Lock()
	defer r.tgt.mu.Unlock()
	return r.tgt.sized[sizeKey(o.src.Title, o.src.FileType, secretstream.CiphertextSize(o.src.Parts[0].Size))]
}

// errNoBytes is an import's original whose upload needs its bytes again
// after they went past (its multipart upload must start over): the next
// run reads them.
var errNoBytes = errors.New("its upload must start over, which needs its bytes read again: the next run does")

// hasBody reports whether an intent holds its POST /files body: a
// streamed original's gets it only once it is read (before, the journal
// holds JSON's null).
func hasBody(in *folder.Intent) bool { return len(in.Body) > 0 && string(in.Body) != "null" }
