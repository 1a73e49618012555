package thumbnails

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
)

// uploadBudget is the encrypted size Ente's web app aims a new thumbnail
// at: it steps its quality down while the JPEG is over 100 KiB.
const uploadBudget = 100<<10 + 17

// Make renders the thumbnail Ente's web app would upload for the original
// at path (fileType 1 for a video, whose frame ffmpeg takes; a live
// photo's image part otherwise), working in tmp, a private temp folder.
// Errors wrap ErrUnsupported when no tool on PATH reads the original:
// then upload PlaceholderJPEG, as Ente's apps do.
func (t Tools) Make(ctx context.Context, path, tmp string, fileType int) ([]byte, error) {
	img, err := t.decodeFile(ctx, path, tmp, fileType)
	if err != nil {
		return nil, err
	}
	return Fit(img, uploadBudget)
}

// PlaceholderJPEG is the black 300×150 thumbnail a file gets when none can be made,
// with metadata hasStaticThumbnail set, as Ente's web app does.
func PlaceholderJPEG() []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 300, 150)), &jpeg.Options{Quality: 75}); err != nil {
		panic("thumbnails: internal error: " + err.Error())
	}
	return b.Bytes()
}
