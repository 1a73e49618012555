// Package publink reads the address of an Ente public album link
// (https://albums.ente.com/?t=TOKEN#KEY): its access token, the album key
// after the #, and the API server that serves it.
//
// The key and the token are the link's secrets: no error of this package
// contains either, and Link prints without them.
package publink

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// KeySize is the size of an album (collection) key.
const KeySize = 32

// Errors of Parse and Endpoint. They say which part of the link is wrong,
// never what it holds.
var (
	// ErrNotALink: the text is not a web address.
	ErrNotALink = errors.New("not a web address")
	// ErrNoToken: the address has neither ?t= nor a path to take the
	// access token from, or what it has cannot be one.
	ErrNoToken = errors.New("no usable access token (the t= part of the link)")
	// ErrNoKey: nothing follows the #. Ente puts the album key there; some
	// apps and chat programs drop it when a link is copied.
	ErrNoKey = errors.New("nothing after # in the link: the album key is missing; copy the whole link")
	// ErrBadKey: what follows the # is not a 32-byte key in base58 or hex.
	ErrBadKey = errors.New("the part after # in the link is not an album key; copy the whole link")
	// ErrSelfHosted: the link's host is not Ente's albums app, so its API
	// server cannot be known from the link.
	ErrSelfHosted = errors.New("a link to a self-hosted server needs --endpoint with the address of its API server")
)

// enteHosts are the albums app's hosts on Ente's own service; their API
// server is DefaultAPI.
var enteHosts = map[string]bool{"albums.ente.com": true, "albums.ente.io": true}

// DefaultAPI is the API server of links on Ente's own service.
const DefaultAPI = "https://api.ente.com"

// maxToken bounds an access token: museum makes 10 characters.
const maxToken = 64

// Link is a parsed public album link.
type Link struct {
	Host        string // the albums app's host, e.g. albums.ente.com
	AccessToken string // museum's access token of the link
	Key         []byte // the album (collection) key, KeySize bytes
}

// String describes l without its secrets.
func (l Link) String() string { return "public link on " + l.Host }

// GoString describes l without its secrets, for %#v.
func (l Link) GoString() string { return "publink.Link{Host: " + fmt.Sprintf("%q", l.Host) + "}" }

// Parse reads a public album link as Ente's albums app does: the access
// token from the query's t, else from the first path segment; the key from
// the fragment, base58 when it is shorter than 50 characters, else hex. A
// link without a scheme is taken as https. Errors wrap ErrNotALink,
// ErrNoToken, ErrNoKey or ErrBadKey and contain neither token nor key.
func Parse(raw string) (*Link, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// url.Parse's error quotes the whole link: it is not wrapped.
		return nil, ErrNotALink
	}
	tok := u.Query().Get("t")
	if tok == "" {
		tok = firstSegment(u.Path)
	}
	if !validToken(tok) {
		return nil, ErrNoToken
	}
	key, err := parseKey(u.Fragment)
	if err != nil {
		return nil, err
	}
	return &Link{Host: strings.ToLower(u.Hostname()), AccessToken: tok, Key: key}, nil
}

// firstSegment is the first non-empty segment of an unescaped path.
func firstSegment(p string) string {
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			return s
		}
	}
	return ""
}

// validToken accepts what museum could have issued: letters and digits.
func validToken(t string) bool {
	if t == "" || len(t) > maxToken {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !alnum(t[i]) {
			return false
		}
	}
	return true
}

// alnum reports an ASCII letter or digit.
func alnum(c byte) bool {
	switch {
	case '0' <= c && c <= '9', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		return true
	}
	return false
}

// parseKey decodes the fragment: base58 below 50 characters, else hex
// (web's extractCollectionKeyFromShareURL), exactly KeySize bytes.
func parseKey(frag string) ([]byte, error) {
	if frag == "" {
		return nil, ErrNoKey
	}
	var key []byte
	var err error
	if len(frag) < 50 {
		key, err = DecodeBase58(frag)
	} else {
		key, err = hex.DecodeString(frag)
	}
	if err != nil || len(key) != KeySize {
		// Neither the decoder's error nor the length of what decoded
		// says anything about the key a user can act on; both could
		// narrow it down.
		return nil, ErrBadKey
	}
	return key, nil
}

// Endpoint is the API server of a link on Ente's own service
// (albums.ente.com, albums.ente.io). Any other host is a self-hosted
// albums app or a custom domain, which look alike: ErrSelfHosted.
func (l *Link) Endpoint() (string, error) {
	if enteHosts[l.Host] {
		return DefaultAPI, nil
	}
	return "", fmt.Errorf("albums host %s: %w", l.Host, ErrSelfHosted)
}

// EncodeKey writes an album key as Ente's apps put it after the # of a
// link: base58.
func EncodeKey(key []byte) string { return EncodeBase58(key) }
