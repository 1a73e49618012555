package enteapitest

import (
	"io"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
)

// The fake's accounts, albums, files and links are the model's records:
// a test makes and changes them directly (Server.AddUser, User.AddAlbum,
// Album.AddFile, File.Trash, Album.ShareLink …), and reads them through
// the API as a client would.
type (
	// User is an account on the fake server.
	User = model.User
	// UserOptions shape an account's login.
	UserOptions = model.UserOptions
	// Album is a collection on the fake server.
	Album = model.Album
	// File is a file on the fake server.
	File = model.File
	// FileSpec describes a file to add.
	FileSpec = model.FileSpec
	// Link is a public link of an album on the fake server.
	Link = model.Link
	// LinkOptions shape a link made by Album.ShareLink.
	LinkOptions = model.LinkOptions
	// LinkRead is one /info or /diff request a link admitted.
	LinkRead = model.LinkRead
)

// OTT is the email code the fake server always sends.
const OTT = model.OTT

// AlbumsURL is where the fake's public links point: museum's default
// apps.public-albums. Its API server is the fake's URL, not the one the
// host stands for: pass that explicitly.
const AlbumsURL = model.AlbumsURL

// Museum's sizes and limits for uploads.
const (
	// MaxFileSize is the largest object POST /files accepts (413 above).
	MaxFileSize = model.MaxFileSize
	// UploadURLLimit is how many requests a user may make a minute on each
	// upload-URL route.
	UploadURLLimit = model.UploadURLLimit
)

// Content is the generated plaintext of a FileSpec with Data nil: byte i is
// byte(i*131 + seed).
func Content(size int64, seed byte) io.Reader { return model.Content(size, seed) }

// LivePhoto zips an image and a video part as Ente's clients do.
func LivePhoto(imageExt string, image []byte, videoExt string, video []byte) []byte {
	return model.LivePhoto(imageExt, image, videoExt, video)
}

// FakeJPEG is a small real JPEG (96×72, colours drawn from name), as a
// thumbnail Ente's clients would have made.
func FakeJPEG(name string) []byte { return model.FakeJPEG(name) }

// PlaceholderJPEG is a black 300×150 JPEG like the fixed one Ente's clients
// store when they cannot make a thumbnail.
func PlaceholderJPEG() []byte { return model.PlaceholderJPEG() }
