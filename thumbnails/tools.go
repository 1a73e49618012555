package thumbnails

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tools runs the external programs quak uses for what Go cannot decode:
// ffmpeg for a video frame, libheif's converter for HEIC. Both are optional;
// without them those files are reported unsupported.
type Tools struct {
	// LookPath finds a program (exec.LookPath by default).
	LookPath func(name string) (string, error)
	// Run runs a program and returns its combined output (exec by default).
	Run func(ctx context.Context, path string, args ...string) ([]byte, error)
}

// SystemTools finds and runs programs on PATH.
func SystemTools() Tools {
	return Tools{
		LookPath: exec.LookPath,
		Run: func(ctx context.Context, path string, args ...string) ([]byte, error) {
			return exec.CommandContext(ctx, path, args...).CombinedOutput()
		},
	}
}

// heifConverters are libheif's command-line decoders, newest name first.
var heifConverters = []string{"heif-dec", "heif-convert"}

// sourceKind says how to read an original.
type sourceKind int

const (
	kindGo    sourceKind = iota + 1 // JPEG, PNG, GIF, WebP: Go decodes it
	kindHEIF                        // HEIC/HEIF/AVIF: libheif's converter
	kindVideo                       // a frame through ffmpeg
)

// sniff tells an image's format from its first bytes; fileType 1 (video)
// always goes through ffmpeg.
func sniff(head []byte, fileType int) (sourceKind, error) {
	if fileType == 1 {
		return kindVideo, nil
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}),
		bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")),
		bytes.HasPrefix(head, []byte("GIF8")),
		len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return kindGo, nil
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		switch string(head[8:12]) {
		case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis":
			return kindHEIF, nil
		}
		// An MP4 or MOV container marked as an image: treat it as video.
		return kindVideo, nil
	}
	return 0, fmt.Errorf("%w: a format quak does not recognise", ErrUnsupported)
}

// decodeFile reads the original at path (in a private temp folder, tmp)
// into an image, through an external tool when Go cannot.
func (t Tools) decodeFile(ctx context.Context, path, tmp string, fileType int) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, 128<<10) // enough for the EXIF block at a JPEG's start
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	kind, err := sniff(head, fileType)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindGo:
		if _, err := f.Seek(0, 0); err != nil {
			return nil, err
		}
		img, err := Decode(f)
		if err != nil {
			return nil, err
		}
		return orient(img, jpegOrientation(head)), nil
	case kindHEIF:
		return t.convert(ctx, tmp, heifConverters, func(out string) [][]string {
			return [][]string{{path, out}}
		})
	default:
		hdr := t.isHDR(ctx, path)
		return t.convert(ctx, tmp, []string{"ffmpeg"}, func(out string) [][]string {
			// Ente's clients take the frame at 1 s, else the first one.
			frame := func(at string, tonemap bool) []string {
				args := []string{"-nostdin", "-loglevel", "error", "-y", "-ss", at, "-i", path, "-frames:v", "1", "-an"}
				if tonemap {
					args = append(args, "-vf", hdrToSDR)
				}
				return append(args, "-f", "image2", "-c:v", "png", out)
			}
			if hdr {
				// An ffmpeg built without zimg cannot tone-map: then the
				// plain frame, washed out, is still better than none.
				return [][]string{frame("00:00:01", true), frame("00:00:00", true), frame("00:00:01", false), frame("00:00:00", false)}
			}
			return [][]string{frame("00:00:01", false), frame("00:00:00", false)}
		})
	}
}

// hdrToSDR is the filter Ente's apps apply to an HDR video's frame so its
// thumbnail is not washed out (web/packages/gallery/services/ffmpeg).
const hdrToSDR = "zscale=transfer=linear,tonemap=tonemap=hable:desat=0,zscale=primaries=709:transfer=709:matrix=709,format=rgb24"

// isHDR reports whether the video's first stream uses a PQ (smpte2084) or
// HLG (arib-std-b67) transfer, as Ente's apps check it with ffprobe; without
// ffprobe, or when it fails, the video is taken as SDR.
func (t Tools) isHDR(ctx context.Context, path string) bool {
	probe, err := t.LookPath("ffprobe")
	if err != nil {
		return false
	}
	out, err := t.Run(ctx, probe, "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=color_transfer",
		"-of", "default=noprint_wrappers=1:nokey=1", path)
	if err != nil {
		return false
	}
	switch strings.TrimSpace(string(out)) {
	case "smpte2084", "arib-std-b67":
		return true
	}
	return false
}

// convert runs the first of names found on PATH with each argument list in
// turn until one writes a PNG that decodes.
func (t Tools) convert(ctx context.Context, tmp string, names []string, argLists func(out string) [][]string) (image.Image, error) {
	var prog string
	for _, n := range names {
		if p, err := t.LookPath(n); err == nil {
			prog = p
			break
		}
	}
	if prog == "" {
		return nil, fmt.Errorf("%w: needs %s on PATH", ErrUnsupported, strings.Join(names, " or "))
	}
	out := filepath.Join(tmp, "frame.png")
	var errsSeen []error
	for _, args := range argLists(out) {
		_ = os.Remove(out)
		msg, err := t.Run(ctx, prog, args...)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			errsSeen = append(errsSeen, fmt.Errorf("%s: %w: %s", filepath.Base(prog), err, firstLine(msg)))
			continue
		}
		f, err := os.Open(out)
		if err != nil {
			errsSeen = append(errsSeen, fmt.Errorf("%s wrote no image", filepath.Base(prog)))
			continue
		}
		img, err := Decode(f)
		_ = f.Close()
		_ = os.Remove(out)
		if err != nil {
			errsSeen = append(errsSeen, err)
			continue
		}
		return img, nil
	}
	return nil, fmt.Errorf("%w: %w", ErrUnsupported, errors.Join(errsSeen...))
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
