package apiclient

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

// PlainMultipartUploadURLs mints a multipart upload of parts parts whose
// URLs pin neither length nor checksum (GET /files/multipart-upload-urls,
// the route Ente's web app uses when it streams a file it cannot checksum
// first): for an object sent as it is made. A part PUT with a Content-MD5
// is still checked against it by the store. Museum sizes the object at
// POST /files and refuses a size that differs from the one declared there.
// Minting is rate-limited and safe to repeat as UploadURL is.
func (c *Client) PlainMultipartUploadURLs(ctx context.Context, parts int) (*MultipartUpload, error) {
	var out struct {
		URLs MultipartUpload `json:"urls"`
	}
	if err := c.do(ctx, "GET", "/files/multipart-upload-urls", url.Values{"count": {strconv.Itoa(parts)}}, nil, &out); err != nil {
		return nil, err
	}
	if out.URLs.ObjectKey == "" || out.URLs.CompleteURL == "" || len(out.URLs.PartURLs) != parts {
		return nil, fmt.Errorf("GET /files/multipart-upload-urls: the answer has %d part URLs for %d parts, or no object key or completion URL",
			len(out.URLs.PartURLs), parts)
	}
	return &out.URLs, nil
}
