package apiclient

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/quak-photos/quak/errs"
)

// Uploading into an account (docs/protocol.md UP.1–UP.11): mint a URL that
// pins an object's length and MD5, PUT the ciphertext there, then commit
// the file with POST /files. Every call is one attempt; which ones are safe
// to repeat is said on each.

// Sizes of Ente's uploads.
const (
	// PartLength is the size of every part of a multipart upload but the
	// last, as Ente's web app cuts them: five ciphertext chunks. The app
	// uploads a stream of five chunks or more (plaintext over 16 MiB) in
	// parts, anything smaller whole.
	PartLength = 5 * (4<<20 + 17)
	// MaxObjectSize is the largest object museum stores (10 GiB of
	// ciphertext): a larger file gets 413.
	MaxObjectSize = 10 << 30
	// MaxAddFiles is how many files one AddFiles call may carry.
	MaxAddFiles = 1000
)

// UserDetails is the account's storage as GET /users/details/v2 reports it
// (UP.10): bytes of ciphertext used (trash included), the plan and any
// bonus, and a family's plan and limits.
type UserDetails struct {
	Email        string       `json:"email"`
	Usage        int64        `json:"usage"`
	StorageBonus int64        `json:"storageBonus"`
	Subscription Subscription `json:"subscription"`
	FamilyData   *FamilyData  `json:"familyData,omitempty"`
}

// Subscription is an account's plan; a self-hosted museum gives every
// account 10 GiB for a hundred years.
type Subscription struct {
	ProductID  string `json:"productID"`
	Storage    int64  `json:"storage"`
	ExpiryTime int64  `json:"expiryTime"` // µs
}

// FamilyData is the family plan an account shares: the admin's storage,
// and each member's usage and limit.
type FamilyData struct {
	Storage    int64          `json:"storage"`
	ExpiryTime int64          `json:"expiryTime"` // µs
	Members    []FamilyMember `json:"members"`
}

// FamilyMember is one member of a family plan.
type FamilyMember struct {
	Email        string `json:"email"`
	Usage        int64  `json:"usage"`
	StorageLimit *int64 `json:"storageLimit"`
	IsAdmin      bool   `json:"isAdmin"`
}

// UserDetails fetches the account's storage figures. Safe to repeat.
func (c *Client) UserDetails(ctx context.Context) (*UserDetails, error) {
	var out UserDetails
	err := c.do(ctx, "GET", "/users/details/v2", url.Values{"memoryCount": {"false"}}, nil, &out)
	return &out, err
}

// Headroom is how many more bytes of ciphertext the account may store at
// now: its plan (none once expired) plus bonus, less what it uses, and for
// a family member also within the member's own limit. It is negative when
// the account is over. museum's own check lags one request and allows
// 50 MiB over (UP.10), so a restore budgets with this figure instead.
func (d *UserDetails) Headroom(now time.Time) int64 {
	storage, expiry := d.Subscription.Storage, d.Subscription.ExpiryTime
	if d.FamilyData != nil {
		storage, expiry = d.FamilyData.Storage, d.FamilyData.ExpiryTime
	}
	if expiry < now.UnixMicro() {
		storage = 0
	}
	if d.FamilyData == nil {
		return storage + d.StorageBonus - d.Usage
	}
	room := storage + d.StorageBonus
	for _, m := range d.FamilyData.Members {
		room -= m.Usage
	}
	for _, m := range d.FamilyData.Members {
		if m.Email == d.Email && m.StorageLimit != nil {
			room = min(room, *m.StorageLimit-m.Usage)
		}
	}
	return room
}

// MultipartUpload is where an object is PUT in parts: one presigned URL
// per part, in order, and the one that completes the upload.
type MultipartUpload struct {
	ObjectKey   string   `json:"objectKey"`
	PartURLs    []string `json:"partURLs"`
	CompleteURL string   `json:"completeURL"`
}

// UploadURL mints a URL for one object of exactly size bytes whose MD5 is
// sum (POST /files/upload-url): the store refuses other bytes (400
// BadDigest), another length (403) and a PUT without Content-MD5. Each
// call mints a new key, and counts against museum's 500 a minute per user
// on this route (429, no Retry-After). 402 or 426 when the account may not
// store size more bytes. Safe to repeat: an object never committed is
// removed by museum after 14 days.
func (c *Client) UploadURL(ctx context.Context, size int64, sum [md5.Size]byte) (*UploadURL, error) {
	in := map[string]any{"contentLength": size, "contentMD5": base64.StdEncoding.EncodeToString(sum[:])}
	var out UploadURL
	if err := c.do(ctx, "POST", "/files/upload-url", nil, in, &out); err != nil {
		return nil, err
	}
	if out.ObjectKey == "" || out.URL == "" {
		return nil, errors.New("POST /files/upload-url: the answer has no object key or URL")
	}
	return &out, nil
}

// MultipartUploadURL mints a multipart upload of one object of size bytes
// in parts of partLength (the last one the rest), each part's URL pinned to
// its length and its MD5 in partSums (POST /files/multipart-upload-url).
// len(partSums) must be the number of parts, else museum answers 400; it
// also refuses parts under 5 MiB when there is more than one. Minting is
// rate-limited and safe to repeat as UploadURL is.
func (c *Client) MultipartUploadURL(ctx context.Context, size, partLength int64, partSums [][md5.Size]byte) (*MultipartUpload, error) {
	sums := make([]string, len(partSums))
	for i, s := range partSums {
		sums[i] = base64.StdEncoding.EncodeToString(s[:])
	}
	in := map[string]any{"contentLength": size, "partLength": partLength, "partMd5s": sums}
	var out MultipartUpload
	if err := c.do(ctx, "POST", "/files/multipart-upload-url", nil, in, &out); err != nil {
		return nil, err
	}
	if out.ObjectKey == "" || out.CompleteURL == "" || len(out.PartURLs) != len(partSums) {
		return nil, fmt.Errorf("POST /files/multipart-upload-url: the answer has %d part URLs for %d parts, or no object key or completion URL",
			len(out.PartURLs), len(partSums))
	}
	return &out, nil
}

// PartSums reads exactly size bytes from r and returns the MD5 of each
// part of partLength bytes (the last one the rest), as MultipartUploadURL
// wants them; with partLength at least size, the one sum is the whole
// object's, as UploadURL wants it. A shorter r is io.ErrUnexpectedEOF.
func PartSums(r io.Reader, size, partLength int64) ([][md5.Size]byte, error) {
	if size <= 0 || partLength <= 0 {
		return nil, fmt.Errorf("parts of %d bytes of an object of %d", partLength, size)
	}
	var sums [][md5.Size]byte
	for left := size; left > 0; left -= partLength {
		h := md5.New()
		n, err := io.CopyN(h, r, min(partLength, left))
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("part %d, after %d bytes: %w", len(sums)+1, n, err)
		}
		sums = append(sums, [md5.Size]byte(h.Sum(nil)))
	}
	return sums, nil
}

// PutUpload sends size bytes read from body to a presigned URL (a whole
// object's or a part's) with Content-MD5 sum, and returns the ETag the
// store answered, verbatim (quotes included). body must yield exactly size
// bytes (a part: an io.SectionReader, or an io.LimitReader of a stream).
// It sends no account token, follows no redirect, and its errors name the
// URL without its query. Safe to repeat with the same bytes while the URL
// is valid (7 days).
func (c *Client) PutUpload(ctx context.Context, presigned string, body io.Reader, size int64, sum [md5.Size]byte) (etag string, err error) {
	if body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, "PUT", presigned, io.NopCloser(body))
	if err != nil {
		return "", redact(err)
	}
	c.setHeaders(req)
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	resp, err := c.storeSend(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJSON))
	return resp.Header.Get("ETag"), redact(err)
}

// storeSend is send for a request to the object store: its error answers
// are marked as the store's, and a redirect is one too.
func (c *Client) storeSend(req *http.Request) (*http.Response, error) {
	resp, err := c.sendTo(req, true)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		drain(resp.Body)
		resp.Body.Close()
		return nil, &errs.ApiError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode,
			Message: "unexpected redirect", ObjectStore: true}
	}
	return resp, nil
}

// maxXML bounds the object store's answer to a completion.
const maxXML = 1 << 20

// CompleteMultipart completes a multipart upload from its parts' ETags, in
// part order (S3's CompleteMultipartUpload). It is NOT safe to repeat: a
// second completion answers 404 NoSuchUpload (UP.2). After a lost answer,
// go on to CreateFile, which answers 503 OBJECT_SIZE_FETCH_FAILED when the
// object does not exist, and only then upload again. An S3 <Error> inside
// a 200 answer (S3 may send one once the body has started) comes back as
// an *errs.ApiError of status 500, which is what it means.
func (c *Client) CompleteMultipart(ctx context.Context, completeURL string, etags []string) error {
	if len(etags) == 0 {
		return errors.New("completing a multipart upload: no parts")
	}
	var b strings.Builder
	b.WriteString("<CompleteMultipartUpload>\n")
	for i, e := range etags {
		if e == "" {
			return fmt.Errorf("completing a multipart upload: part %d has no ETag", i+1)
		}
		fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>\n", i+1, xmlText.Replace(e))
	}
	b.WriteString("</CompleteMultipartUpload>")
	req, err := http.NewRequestWithContext(ctx, "POST", completeURL, strings.NewReader(b.String()))
	if err != nil {
		return redact(err)
	}
	c.setHeaders(req)
	req.Header.Set("Content-Type", "text/xml")
	resp, err := c.storeSend(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxXML))
	if err != nil {
		return redact(err)
	}
	var answer struct {
		XMLName xml.Name
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if err := xml.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("completing a multipart upload: reading the answer: %w", err)
	}
	switch answer.XMLName.Local {
	case "CompleteMultipartUploadResult":
		return nil
	case "Error":
		return &errs.ApiError{Method: req.Method, Path: req.URL.Path, Status: http.StatusInternalServerError,
			Code: answer.Code, Message: excerpt("inside a 200 answer: "+answer.Message, nil), ObjectStore: true}
	}
	return fmt.Errorf("completing a multipart upload: unexpected answer <%s>", answer.XMLName.Local)
}

// xmlText escapes what XML text may not hold, and leaves an ETag's quotes
// as Ente's apps send them.
var xmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Collection fetches one collection as the caller sees it (GET
// /collections/{id}), deleted ones included: read its updationTime before
// committing a file, to find the file in the diff after a lost answer.
func (c *Client) Collection(ctx context.Context, id int64) (*Collection, error) {
	var out struct {
		Collection Collection `json:"collection"`
	}
	err := c.do(ctx, "GET", "/collections/"+itoa(id), nil, nil, &out)
	return &out.Collection, err
}
