package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/quak-photos/quak/errs"
)

// DefaultEndpoint is Ente's hosted API server.
const DefaultEndpoint = "https://api.ente.com"

// ClientPackage is sent as X-Client-Package on every request. museum binds
// tokens to the app this names, so login and every later call must agree.
const ClientPackage = "io.ente.photos"

// maxJSON bounds an API response body; a diff page of 2,500 files is a few MB.
const maxJSON = 256 << 20

// Client is an Ente API client. It is safe for concurrent use; WithToken
// returns a copy that authenticates.
type Client struct {
	base    *url.URL
	hc      *http.Client
	token   string
	version string
	link    *linkCreds // a public link's credentials instead of a token (link.go)
}

// New returns a client of the API server at baseURL that sends its requests
// through hc. Redirects are never followed automatically: the download calls
// follow the object-store redirect themselves, without the token.
func New(baseURL string, hc *http.Client, version string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an http(s) URL", baseURL)
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: u, hc: &c, version: version}, nil
}

// WithToken returns a copy of c that authenticates with token (URL-safe
// base64, as museum issued it).
func (c *Client) WithToken(token string) *Client {
	cc := *c
	cc.token = token
	return &cc
}

// Endpoint is the API base URL.
func (c *Client) Endpoint() string { return c.base.String() }

func (c *Client) setHeaders(req *http.Request) {
	if c.link != nil {
		req.Header.Set("User-Agent", c.link.userAgent)
		return
	}
	req.Header.Set("X-Client-Package", ClientPackage)
	req.Header.Set("X-Client-Version", c.version)
	req.Header.Set("User-Agent", "quak/"+c.version)
}

// do sends one API request with an optional JSON body and decodes a JSON
// answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	_, err := c.doHeader(ctx, method, path, query, in, out)
	return err
}

// doHeader is do that also returns the answer's headers.
func (c *Client) doHeader(ctx context.Context, method, path string, query url.Values, in, out any) (http.Header, error) {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = b
	}
	return c.doRaw(ctx, method, path, query, body, out)
}

// doJSON is do with the JSON body given as bytes (nil: no body), sent as
// they are.
func (c *Client) doJSON(ctx context.Context, method, path string, query url.Values, in []byte, out any) error {
	_, err := c.doRaw(ctx, method, path, query, in, out)
	return err
}

// doRaw sends the request with the JSON body in (nil: none) and returns
// the answer's headers.
func (c *Client) doRaw(ctx context.Context, method, path string, query url.Values, in []byte, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(in)
	}
	u := c.base.JoinPath(path)
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	c.setHeaders(req)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req, path)
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJSON))
		return resp.Header, redact(err)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSON)).Decode(out); err != nil {
		return nil, fmt.Errorf("%s %s: decoding the answer: %w", method, path, redact(err))
	}
	return resp.Header, nil
}

// authorize puts the credentials of an API request for path in its
// headers: the account's token, or a public link's (linkCreds.headers).
func (c *Client) authorize(req *http.Request, path string) {
	if c.link != nil {
		c.link.headers(req, path)
		return
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
}

// secrets are the credentials an error must never show.
func (c *Client) secrets() []string {
	if c.link != nil {
		return c.link.secrets()
	}
	return []string{c.token}
}

// send performs req and returns the response when it is 2xx or a redirect;
// anything else becomes *errs.ApiError, or *LinkError when museum itself
// refuses a public link (linkRefusal). Errors never carry a query string.
func (c *Client) send(req *http.Request) (*http.Response, error) { return c.sendTo(req, false) }

// sendTo is send, and marks the error an answer made as the object
// store's when store is set. An error it did not make (one a cancelled
// request's context carries as its cause, which other requests share) is
// never changed.
func (c *Client) sendTo(req *http.Request, store bool) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, redact(err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	e, raw := apiError(req, resp, c.secrets()...)
	e.ObjectStore = store
	if c.link != nil && req.URL.Host == c.base.Host {
		return nil, linkRefusal(e, raw)
	}
	return nil, e
}

// apiError reads the error body in whichever of museum's shapes it comes
// ({"code","message"}, {"error"}, {}) or as S3's XML, and keeps an excerpt.
// An error page that echoes the request must not carry a secret (the token,
// a link's credentials) into logs and records: each is scrubbed from the
// body before anything is cut from it. It also returns the scrubbed body.
func apiError(req *http.Request, resp *http.Response, secrets ...string) (*errs.ApiError, []byte) {
	e := &errs.ApiError{
		Method:     req.Method,
		Path:       req.URL.Path,
		Status:     resp.StatusCode,
		RequestID:  resp.Header.Get("X-Request-Id"),
		RetryAfter: resp.Header.Get("Retry-After"),
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	raw = scrub(raw, secrets)
	var j struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	switch {
	case json.Unmarshal(raw, &j) == nil:
		e.Code = j.Code
		e.Message = excerpt(j.Message+j.Error, secrets)
	case xml.Unmarshal(raw, &x) == nil && x.Code != "":
		e.Code = x.Code
		e.Message = excerpt(x.Message, secrets)
	default:
		e.Message = excerpt(string(raw), secrets)
	}
	return e, raw
}

// scrub replaces every whole secret in raw.
func scrub(raw []byte, secrets []string) []byte {
	for _, token := range secrets {
		if token != "" {
			raw = bytes.ReplaceAll(raw, []byte(token), []byte("[token]"))
		}
	}
	return raw
}

// keptOfToken is the longest prefix of the token an excerpt may end with:
// a longer one at the cut is taken to be the token and dropped.
const keptOfToken = 4

// excerpt is s on one line, at most 200 bytes, with no secret in it (s
// may come decoded from JSON or XML escapes the raw scrub did not match)
// and not ending in more than keptOfToken bytes of one.
func excerpt(s string, secrets []string) string {
	for _, token := range secrets {
		if token != "" {
			s = strings.ReplaceAll(s, token, "[token]")
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= 200 {
		return s
	}
	s = s[:200]
	for _, token := range secrets {
		if cut, ok := cutPrefixOf(s, token); ok {
			s = cut
			break
		}
	}
	return s + "…"
}

// cutPrefixOf replaces a prefix of token longer than keptOfToken bytes at
// the end of s.
func cutPrefixOf(s, token string) (string, bool) {
	for n := min(len(token)-1, len(s)); n > keptOfToken; n-- {
		if strings.HasSuffix(s, token[:n]) {
			return s[:len(s)-n] + "[token]", true
		}
	}
	return s, false
}

// redact removes the query string (which may hold the token or a presigned
// signature) from any URL inside err.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = stripQuery(ue.URL)
	}
	return err
}

func stripQuery(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}

// Answers reports whether the server at rawURL's scheme and host answers
// HTTP at all (any status, an error one included, is an answer); an empty
// rawURL asks the API server. Nothing of rawURL but its scheme and host is
// sent, and no token: it tells a host that is gone from one whose objects
// fail one by one.
func (c *Client) Answers(ctx context.Context, rawURL string) bool {
	u := &url.URL{Scheme: c.base.Scheme, Host: c.base.Host, Path: "/"}
	if rawURL != "" {
		p, err := url.Parse(rawURL)
		if err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			return false
		}
		u.Scheme, u.Host = p.Scheme, p.Host
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	if err != nil {
		return false
	}
	c.setHeaders(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJSON))
	_ = resp.Body.Close()
	return true
}
