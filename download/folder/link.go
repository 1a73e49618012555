package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/quak-photos/quak/download/durable"
)

// linkFile is DIR/.quak/link.json: the public link a folder follows, with
// its secrets. It is written 0600 and must be read only when it still is.
const linkFile = "link.json"

// linkVersion is the version of link.json this quak writes and reads.
const linkVersion = 1

// LinkSecrets is the public link a backup folder follows: everything a run
// from cron needs to read it again. AccessToken, Key, JWT and DeviceToken
// are secrets; String and GoString leave them out, and no error of this
// package contains them.
type LinkSecrets struct {
	Host        string `json:"host"`     // the albums app's host, to name the link
	Endpoint    string `json:"endpoint"` // the API server
	Album       int64  `json:"album"`    // the album's id
	AccessToken string `json:"accessToken"`
	Key         []byte `json:"key"` // the album key, from after the #
	// JWT is the password's token, for a password link ("" for none).
	JWT string `json:"jwt,omitempty"`
	// DeviceToken is museum's admission of this installation ("" until it
	// sent one).
	DeviceToken string `json:"deviceToken,omitempty"`
}

// String names the link without its secrets.
func (s LinkSecrets) String() string {
	return fmt.Sprintf("public link on %s (album %d)", s.Host, s.Album)
}

// GoString is String, for %#v.
func (s LinkSecrets) GoString() string { return s.String() }

// linkFileJSON is link.json on disk.
type linkFileJSON struct {
	Version int `json:"version"`
	LinkSecrets
}

// ErrBadLinkFile reports a link.json this quak cannot use; the message
// never quotes its content.
var ErrBadLinkFile = errors.New("is not a link file this quak can read")

// LinkPath is DIR/.quak/link.json. Read it as a secret file: refuse it
// when others can read it.
func (f *Folder) LinkPath() string { return f.path(linkFile) }

// HasLink reports whether the folder follows a public link.
func (f *Folder) HasLink() bool { return isFile(f.LinkPath()) }

// ParseLink reads the content of link.json. A damaged or newer file is an
// error wrapping ErrBadLinkFile, naming the file but nothing in it.
func (f *Folder) ParseLink(b []byte) (*LinkSecrets, error) {
	var lf linkFileJSON
	if err := json.Unmarshal(b, &lf); err != nil || lf.Version != linkVersion ||
		lf.AccessToken == "" || len(lf.Key) != 32 || lf.Endpoint == "" {
		return nil, fmt.Errorf("%s %w", f.LinkPath(), ErrBadLinkFile)
	}
	return &lf.LinkSecrets, nil
}

// WriteLink keeps the link the folder follows in link.json, mode 0600,
// atomically and synced.
func (f *Folder) WriteLink(s LinkSecrets) error {
	b, err := marshal(linkFileJSON{Version: linkVersion, LinkSecrets: s})
	if err != nil {
		return err
	}
	return durable.WriteFileSynced(f.Temp(), f.LinkPath(), b, 0o600)
}

func isFile(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
