package apiclient

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/quak-photos/quak/errs"
)

// maxRedirects bounds the hops from museum to the object store.
const maxRedirects = 3

// Object is an open encrypted object: its body and its length (-1 when the
// server did not say), and for resuming, the status, the ETag and the
// Content-Range of the answer. The caller closes Body.
type Object struct {
	Body         io.ReadCloser
	Length       int64
	Status       int
	ETag         string
	ContentRange string
	// URL is the object store's address that answered, when museum
	// redirected there (presigned, no token; "" when museum answered
	// itself): further ranges of the object can be asked of it directly.
	URL string
}

// DownloadFile opens the encrypted original of fileID. Safe to repeat.
func (c *Client) DownloadFile(ctx context.Context, fileID int64) (*Object, error) {
	return c.openObject(ctx, "/files/download/"+itoa(fileID), 0)
}

// DownloadFileFrom asks for the encrypted original of fileID from byte
// offset on (Range: bytes=offset-). The store may answer 206 with that
// range, or ignore the header and answer 200 with the whole object: the
// caller checks Status, ContentRange and ETag before trusting it.
func (c *Client) DownloadFileFrom(ctx context.Context, fileID, offset int64) (*Object, error) {
	return c.openObject(ctx, "/files/download/"+itoa(fileID), offset)
}

// DownloadFileRange asks for bytes from through to (inclusive) of the
// encrypted original of fileID (Range: bytes=from-to). The caller checks
// Status, ContentRange and ETag: a store may ignore the header.
func (c *Client) DownloadFileRange(ctx context.Context, fileID, from, to int64) (*Object, error) {
	return c.openRange(ctx, "/files/download/"+itoa(fileID), "bytes="+strconv.FormatInt(from, 10)+"-"+strconv.FormatInt(to, 10))
}

// DownloadObjectRange asks the object store at rawURL (an Object's URL)
// for bytes from through to, inclusive, with no credentials.
func (c *Client) DownloadObjectRange(ctx context.Context, rawURL string, from, to int64) (*Object, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", rawURL, nil)
	if err != nil {
		return nil, redact(err)
	}
	c.setHeaders(req)
	req.Header.Set("Range", "bytes="+strconv.FormatInt(from, 10)+"-"+strconv.FormatInt(to, 10))
	resp, err := c.send(req) //nolint:bodyclose // the body is the Object's, closed by the caller
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		ae.ObjectStore = true
	}
	if err != nil {
		return nil, err
	}
	return &Object{Body: resp.Body, Length: resp.ContentLength, Status: resp.StatusCode, URL: rawURL,
		ETag: resp.Header.Get("ETag"), ContentRange: resp.Header.Get("Content-Range")}, nil
}

// DownloadThumbnail opens the encrypted thumbnail of fileID. Safe to repeat.
func (c *Client) DownloadThumbnail(ctx context.Context, fileID int64) (*Object, error) {
	return c.openObject(ctx, "/files/preview/"+itoa(fileID), 0)
}

// openObject asks museum for an object with the credentials of
// authorizeObject and follows the 307 to the object store itself, with no
// credentials and no Referer. A museum that serves the bytes directly
// (200) works too.
func (c *Client) openObject(ctx context.Context, path string, from int64) (*Object, error) {
	rng := ""
	if from > 0 {
		rng = "bytes=" + strconv.FormatInt(from, 10) + "-"
	}
	return c.openRange(ctx, path, rng)
}

// openRange is openObject with a Range header (none when rng is "").
func (c *Client) openRange(ctx context.Context, path, rng string) (*Object, error) {
	u := c.base.JoinPath(path)
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
		if err != nil {
			return nil, redact(err)
		}
		c.setHeaders(req)
		if hop == 0 {
			c.authorizeObject(req)
		}
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := c.send(req)
		var ae *errs.ApiError
		if errors.As(err, &ae) && hop > 0 {
			ae.ObjectStore = true
		}
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 300 {
			o := &Object{Body: resp.Body, Length: resp.ContentLength, Status: resp.StatusCode,
				ETag: resp.Header.Get("ETag"), ContentRange: resp.Header.Get("Content-Range")}
			if hop > 0 {
				o.URL = resp.Request.URL.String()
			}
			return o, nil
		}
		loc, lerr := resp.Location()
		drain(resp.Body)
		resp.Body.Close()
		if lerr != nil || hop >= maxRedirects {
			return nil, &errs.ApiError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode,
				Message: "redirect without a usable Location, or too many"}
		}
		u = loc
	}
}

// authorizeObject puts the credentials of a download request to museum in
// place: the account's token in X-Auth-Token, never in the URL, which
// proxies log and error pages echo; a public link's in the query, where
// museum's albums app puts them (linkCreds.query). Neither reaches the
// object store: openRange follows the redirect without them.
func (c *Client) authorizeObject(req *http.Request) {
	if c.link != nil {
		req.URL.RawQuery = c.link.query().Encode()
		return
	}
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
}

// drain reads what is left of a body museum sent with a redirect (Go's
// http.Redirect writes a short HTML page), so that closing it gives its
// connection back to the pool instead of closing it: a new connection per
// file costs a round trip, two more with TLS. A page longer than maxDrain,
// or one still arriving after drainWait, is not worth waiting for: its
// connection is closed.
func drain(body io.ReadCloser) {
	t := time.AfterFunc(drainWait, func() { body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	t.Stop()
}

// maxDrain is the most of an unwanted body read to keep its connection.
const maxDrain = 64 << 10

// drainWait is the longest an unwanted body is read to keep its connection
// (museum's page comes with the headers: reading it takes no wait at all);
// a page that trickles in costs no more than this a hop.
var drainWait = 250 * time.Millisecond

// FilesInfo returns the recorded ciphertext sizes of owned files.
func (c *Client) FilesInfo(ctx context.Context, fileIDs []int64) (map[int64]FileInfo, error) {
	var out struct {
		FilesInfo []struct {
			ID       int64    `json:"id"`
			FileInfo FileInfo `json:"fileInfo"`
		} `json:"filesInfo"`
	}
	if err := c.do(ctx, "POST", "/files/info", nil, map[string]any{"fileIDs": fileIDs}, &out); err != nil {
		return nil, err
	}
	m := make(map[int64]FileInfo, len(out.FilesInfo))
	for _, fi := range out.FilesInfo {
		m[fi.ID] = fi.FileInfo
	}
	return m, nil
}

// LargeThumbnails lists the caller's files whose thumbnail object is at
// least threshold bytes, by the size museum records for the object
// (object_keys.size): the size PUT /files/thumbnail compares a new
// thumbnail against. files.info's thumbSize keeps the size at upload and is
// not updated when a thumbnail is replaced.
func (c *Client) LargeThumbnails(ctx context.Context, threshold int64) ([]int64, error) {
	var out struct {
		IDs []int64 `json:"largeThumbnailFiles"`
	}
	err := c.do(ctx, "GET", "/files/large-thumbnails", url.Values{"threshold": {itoa(threshold)}}, nil, &out)
	return out.IDs, err
}

// UploadURLs mints count presigned PUT URLs. Safe to repeat: unused objects
// are collected by the server.
func (c *Client) UploadURLs(ctx context.Context, count int) ([]UploadURL, error) {
	var out struct {
		URLs []UploadURL `json:"urls"`
	}
	err := c.do(ctx, "GET", "/files/upload-urls", url.Values{"count": {strconv.Itoa(count)}}, nil, &out)
	return out.URLs, err
}

// PutObject uploads body to a presigned URL with its Content-MD5. Safe to
// repeat while the URL is valid: it overwrites the same key.
func (c *Client) PutObject(ctx context.Context, presigned string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, "PUT", presigned, bytes.NewReader(body))
	if err != nil {
		return redact(err)
	}
	c.setHeaders(req)
	sum := md5.Sum(body)
	req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	req.ContentLength = int64(len(body))
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return &errs.ApiError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Message: "unexpected redirect"}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return redact(err)
}

// UpdateThumbnail points fileID's thumbnail at an uploaded object. It is NOT
// safe to repeat: museum answers 500 to an exact repeat even when the first
// call succeeded. After a timeout or 5xx, re-read the file and compare its
// thumbnail header before trying again (package thumbnails does).
func (c *Client) UpdateThumbnail(ctx context.Context, fileID int64, objectKey string, header []byte) error {
	in := map[string]any{
		"fileID":    fileID,
		"thumbnail": map[string]any{"objectKey": objectKey, "decryptionHeader": B64(header)},
	}
	return c.do(ctx, "PUT", "/files/thumbnail", nil, in, nil)
}
