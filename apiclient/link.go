package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/quak-photos/quak/apiclient/keys"
)

// A public album link's routes on museum (docs/protocol.md PL.3).
const (
	linkInfoPath     = "/public-collection/info"
	linkDiffPath     = "/public-collection/diff"
	linkPasswordPath = "/public-collection/verify-password"
	linkDownloadPath = "/public-collection/files/download/"
	linkPreviewPath  = "/public-collection/files/preview/"
)

// linkCreds are the credentials of a public link's requests.
type linkCreds struct {
	userAgent   string
	accessToken string // the link's t=
	jwt         string // from verify-password, for a password link
	deviceToken string // museum's admission of this device (PL.5)
}

// headers puts the credentials of an API request for path in its headers:
// the access token always; the password's JWT on every route but /info and
// /verify-password, which museum lets through without it; the device
// token on /info and /diff, the only routes that read it.
func (l *linkCreds) headers(req *http.Request, path string) {
	req.Header.Set("X-Auth-Access-Token", l.accessToken)
	if l.jwt != "" && path != linkInfoPath && path != linkPasswordPath {
		req.Header.Set("X-Auth-Access-Token-JWT", l.jwt)
	}
	if l.deviceToken != "" && (path == linkInfoPath || path == linkDiffPath) {
		req.Header.Set("X-Auth-Link-Device-Token", l.deviceToken)
	}
}

// query is the credentials of a download or preview request, which carry
// them in the query string, as Ente's albums app does.
func (l *linkCreds) query() url.Values {
	q := url.Values{"accessToken": {l.accessToken}}
	if l.jwt != "" {
		q.Set("accessTokenJWT", l.jwt)
	}
	return q
}

func (l *linkCreds) secrets() []string { return []string{l.accessToken, l.jwt, l.deviceToken} }

// LinkClient reads the album of one public link, with the link's own
// credentials and no account. It never sends an Origin header (museum
// refuses foreign ones) nor X-Forwarded-For or X-Real-IP (museum would
// count a new device), and always the same User-Agent: museum counts a
// device per (IP, User-Agent). Each call makes one attempt; any non-2xx
// answer is *errs.ApiError, or *LinkError when museum refuses the link
// itself. It is safe for concurrent use; the With methods return copies.
type LinkClient struct{ c *Client }

// NewLinkClient returns a client of the link with accessToken on the API
// server at endpoint, sending its requests through hc with userAgent,
// which must stay the same from run to run.
func NewLinkClient(endpoint string, hc *http.Client, userAgent, accessToken string) (*LinkClient, error) {
	if userAgent == "" || accessToken == "" {
		return nil, errors.New("a link client needs a user agent and an access token")
	}
	c, err := New(endpoint, hc, "")
	if err != nil {
		return nil, err
	}
	c.link = &linkCreds{userAgent: userAgent, accessToken: accessToken}
	return &LinkClient{c: c}, nil
}

// with returns a copy of l whose credentials change sets.
func (l *LinkClient) with(change func(*linkCreds)) *LinkClient {
	c := *l.c
	creds := *c.link
	change(&creds)
	c.link = &creds
	return &LinkClient{c: &c}
}

// WithJWT returns a copy of l that sends jwt, the token VerifyPassword
// returned, as a password link requires on every route but Info.
func (l *LinkClient) WithJWT(jwt string) *LinkClient {
	return l.with(func(c *linkCreds) { c.jwt = jwt })
}

// WithDeviceToken returns a copy of l that sends token, a LinkInfo's
// DeviceToken kept from an earlier run, on Info and Diff: museum then
// admits this installation whatever its IP, without using another of the
// link's device slots.
func (l *LinkClient) WithDeviceToken(token string) *LinkClient {
	return l.with(func(c *linkCreds) { c.deviceToken = token })
}

// Endpoint is the API base URL.
func (l *LinkClient) Endpoint() string { return l.c.Endpoint() }

// LinkSettings are what museum tells a link's reader of the link: never its
// expiry or device limit.
type LinkSettings struct {
	// EnableDownload false means the owner does not want originals
	// downloaded. museum does not enforce it: the reader must.
	EnableDownload  bool `json:"enableDownload"`
	EnableCollect   bool `json:"enableCollect"`
	EnableComment   bool `json:"enableComment"`
	EnableJoin      bool `json:"enableJoin"`
	PasswordEnabled bool `json:"passwordEnabled"`
	// Nonce (the Argon2id salt, despite its name), OpsLimit and MemLimit
	// (bytes) derive a password link's PassHash.
	Nonce    B64    `json:"nonce,omitempty"`
	OpsLimit uint32 `json:"opsLimit,omitempty"`
	MemLimit uint64 `json:"memLimit,omitempty"`
}

// PassHash derives what VerifyPassword sends for password: Argon2id of it
// with the link's salt and limits, in standard base64 (PL.6). It fails
// with an error wrapping keys.ErrBadParams when those are unusable.
func (s LinkSettings) PassHash(password string) (string, error) {
	h, err := keys.DeriveKEK([]byte(password), s.Nonce, s.OpsLimit, s.MemLimit)
	if err != nil {
		return "", err
	}
	return keys.EncodeB64(h), nil
}

// LinkInfo is a link's album and settings.
type LinkInfo struct {
	// Collection is the album, encrypted; its key is the link's. Its
	// encryptedKey is the owner's and of no use to a reader.
	Collection Collection
	Settings   LinkSettings
	// DeviceToken is a device token museum minted with this answer, to
	// keep and send back on later runs (WithDeviceToken); "" when it
	// minted none (it then still honours the one sent).
	DeviceToken string
}

// errNoLinkSettings reports an /info answer without the link's settings.
var errNoLinkSettings = errors.New("GET " + linkInfoPath + ": the answer describes no link")

// Info fetches the link's album and settings, and a device token when
// museum mints one. It works before a password link's password is given.
// A refused link is *LinkError. Safe to repeat.
func (l *LinkClient) Info(ctx context.Context) (*LinkInfo, error) {
	var out struct {
		Collection struct {
			Collection
			PublicURLs []LinkSettings `json:"publicURLs"`
		} `json:"collection"`
	}
	h, err := l.c.doHeader(ctx, "GET", linkInfoPath, nil, nil, &out)
	if err != nil {
		return nil, err
	}
	if len(out.Collection.PublicURLs) == 0 {
		return nil, errNoLinkSettings
	}
	return &LinkInfo{Collection: out.Collection.Collection, Settings: out.Collection.PublicURLs[0],
		DeviceToken: h.Get("X-Ente-Link-Device-Token")}, nil
}

// Diff fetches one page of the album's file entries changed after
// sinceTime, as DiffPage does for an account: continue from DiffCursor
// while HasMore. Safe to repeat.
func (l *LinkClient) Diff(ctx context.Context, sinceTime int64) (*DiffPage, error) {
	var out DiffPage
	err := l.c.do(ctx, "GET", linkDiffPath, url.Values{"sinceTime": {itoa(sinceTime)}}, nil, &out)
	return &out, err
}

// errNoJWT reports a verify-password answer without a token.
var errNoJWT = errors.New("POST " + linkPasswordPath + ": the answer has no token")

// VerifyPassword trades a password link's passHash (LinkSettings.PassHash)
// for the JWT its other routes need (WithJWT); the JWT lasts a year. A
// wrong password is *LinkError with ErrLinkWrongPassword. museum allows 10
// attempts a minute per IP: never repeat it in a loop.
func (l *LinkClient) VerifyPassword(ctx context.Context, passHash string) (string, error) {
	var out struct {
		JWT string `json:"jwtToken"`
	}
	if err := l.c.do(ctx, "POST", linkPasswordPath, nil, map[string]string{"passHash": passHash}, &out); err != nil {
		return "", err
	}
	if out.JWT == "" {
		return "", errNoJWT
	}
	return out.JWT, nil
}

// DownloadFile opens the encrypted original of fileID, as Client's does.
// museum serves it even when the link's EnableDownload is false. Safe to
// repeat.
func (l *LinkClient) DownloadFile(ctx context.Context, fileID int64) (*Object, error) {
	return l.c.openObject(ctx, linkDownloadPath+itoa(fileID), 0)
}

// DownloadFileFrom is Client.DownloadFileFrom for the link's file.
func (l *LinkClient) DownloadFileFrom(ctx context.Context, fileID, offset int64) (*Object, error) {
	return l.c.openObject(ctx, linkDownloadPath+itoa(fileID), offset)
}

// DownloadFileRange is Client.DownloadFileRange for the link's file.
func (l *LinkClient) DownloadFileRange(ctx context.Context, fileID, from, to int64) (*Object, error) {
	return l.c.openRange(ctx, linkDownloadPath+itoa(fileID), "bytes="+strconv.FormatInt(from, 10)+"-"+strconv.FormatInt(to, 10))
}

// DownloadThumbnail opens the encrypted thumbnail of fileID. Safe to repeat.
func (l *LinkClient) DownloadThumbnail(ctx context.Context, fileID int64) (*Object, error) {
	return l.c.openObject(ctx, linkPreviewPath+itoa(fileID), 0)
}

// DownloadObjectRange is Client.DownloadObjectRange: the object store at
// rawURL, with no credentials.
func (l *LinkClient) DownloadObjectRange(ctx context.Context, rawURL string, from, to int64) (*Object, error) {
	return l.c.DownloadObjectRange(ctx, rawURL, from, to)
}

// Answers is Client.Answers: whether a server answers at all, asked with
// no credentials.
func (l *LinkClient) Answers(ctx context.Context, rawURL string) bool {
	return l.c.Answers(ctx, rawURL)
}
