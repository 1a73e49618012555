package model

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Uploads as museum and its object store take them (docs/protocol.md
// UP.1–UP.11, checked against museum a621d73 with MinIO). The fake checks
// no crypto, as museum does not: junk keys, headers and metadata are
// stored as sent (UP.4).

// uploads is the upload state: URLs minted, multipart uploads under way,
// what POST /files and POST /collections stored, plans and rate windows.
// Museum.mu guards it.
type uploads struct {
	pins      map[string]Pin        // object key → its checksummed URL's length and MD5
	multipart map[string]*multipart // upload id → a multipart upload not yet completed
	commits   map[int64]*commit     // file id → the POST /files body it was made from
	byObject  map[string]int64      // object key → the file committed with it
	albums    map[int64]*NewAlbum   // album id → what POST /collections stored
	magic     map[int64]*Magic      // file id → private magic metadata sent at commit
	plans     map[int64]*plan       // user id → storage plan
	limits    map[windowKey]*window // per user and route: upload URLs minted this minute
}

func (up *uploads) init() {
	up.pins, up.multipart, up.commits = map[string]Pin{}, map[string]*multipart{}, map[int64]*commit{}
	up.byObject, up.albums, up.magic = map[string]int64{}, map[int64]*NewAlbum{}, map[int64]*Magic{}
	up.plans, up.limits = map[int64]*plan{}, map[windowKey]*window{}
}

// Pin is what a checksummed URL signs: the body's length and its MD5 as
// base64 (UP.2). A Size of -1 signs nothing (a plain URL).
type Pin struct {
	Size int64
	MD5  string
}

// multipart is a multipart upload: the object it makes, each part's pin,
// and the parts stored so far.
type multipart struct {
	key   string
	parts []Pin
	got   map[int][]byte
}

// MaxFileSize is the largest object POST /files accepts (UP.4: 413).
const MaxFileSize = 10 << 30

// minPart is S3's smallest part but the last.
const minPart = 5 << 20

// mintKey makes a new object key of u's, as museum names them; m.mu is
// held.
func (m *Museum) mintKey(u *User) string {
	return fmt.Sprintf("%d/%s", u.ID, m.uuid())
}

// UploadGuard is museum's guard of an upload-URL route, before it reads
// the request: 500 a minute per user and route (429 with no Retry-After,
// UP.2; refused requests count too, and the minute is the clock's), then,
// for a route that knows no size (checkPlan), the plan (402/426, UP.10).
func (m *Museum) UploadGuard(u *User, route string, checkPlan bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if countIn(m.up.limits, windowKey{u.ID, route}, m.clock.now) > UploadURLLimit {
		return RateLimited
	}
	if checkPlan {
		return m.canUpload(u, nil)
	}
	return nil
}

// UploadURLs answers GET /files/upload-urls?count=n after its guard: n
// (capped to 0..50) new object keys, their URLs unpinned.
func (m *Museum) UploadURLs(u *User, n int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := []string{}
	for i := 0; i < min(max(n, 0), 50); i++ {
		keys = append(keys, m.mintKey(u))
	}
	return keys
}

// UploadURL answers POST /files/upload-url (UP.2) after its guard: both
// fields required, a length from 1 byte to 10 GiB, a base64 MD5 (400
// otherwise), then the plan with that size; the URL of the key returned
// pins both.
func (m *Museum) UploadURL(u *User, length int64, contentMD5 string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sum, ok := normalizeMD5(contentMD5)
	if length <= 0 || length > MaxFileSize || !ok {
		return "", plain(BadRequest)
	}
	if err := m.canUpload(u, &length); err != nil {
		return "", err
	}
	key := m.mintKey(u)
	m.up.pins[key] = Pin{Size: length, MD5: sum}
	return key, nil
}

// MultipartUpload is a multipart upload minted: its object key, upload
// id and number of parts.
type MultipartUpload struct {
	Key, ID string
	Parts   int
}

// MultipartUploadURL answers POST /files/multipart-upload-url (UP.2)
// after its guard: parts = ceil(contentLength/partLength) =
// len(partMD5s), parts of at least 5 MiB when there are several and at
// most 5 GiB each, 10 GiB in total (400 otherwise), then the plan without
// a size. Each part's URL pins its length and MD5.
func (m *Museum) MultipartUploadURL(u *User, length, partLength int64, partMD5s []string) (MultipartUpload, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts, ok := partPins(length, partLength, partMD5s)
	if !ok {
		return MultipartUpload{}, plain(BadRequest)
	}
	if err := m.canUpload(u, nil); err != nil {
		return MultipartUpload{}, err
	}
	mu := MultipartUpload{Key: m.mintKey(u), ID: hex.EncodeToString(m.random(16)), Parts: len(parts)}
	m.up.multipart[mu.ID] = &multipart{key: mu.Key, parts: parts, got: map[int][]byte{}}
	return mu, nil
}

// normalizeMD5 reads a contentMD5 as museum does: 16 bytes in base64.
// museum falls back to hex, but every 32-digit hex string is also valid
// base64 of 24 bytes, and other hex strings are not 16 bytes: hex is
// always refused (UP.2).
func normalizeMD5(v string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	return base64.StdEncoding.EncodeToString(b), err == nil && len(b) == md5.Size
}

// partPins checks a multipart request as museum does and returns each
// part's pin.
func partPins(size, partLength int64, sums []string) ([]Pin, bool) {
	if size <= 0 || size > MaxFileSize || len(sums) == 0 || partLength <= 0 || partLength > 5<<30 ||
		(size > partLength && partLength < minPart) {
		return nil, false
	}
	// At most 2,048 parts fit these bounds: museum's cap of 10,000 never bites.
	if int64(len(sums)) != (size+partLength-1)/partLength {
		return nil, false
	}
	pins := make([]Pin, len(sums))
	left := size
	for i, v := range sums {
		sum, ok := normalizeMD5(v)
		if !ok {
			return nil, false
		}
		pins[i] = Pin{Size: min(partLength, left), MD5: sum}
		left -= pins[i].Size
	}
	return pins, true
}

// PinOf is the pin of key's upload URL; a key minted unpinned (or never)
// has a Pin of Size -1.
func (m *Museum) PinOf(key string) Pin {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.up.pins[key]; ok {
		return p
	}
	return Pin{Size: -1}
}

// StoreError is the object store refusing a request, in S3's terms.
type StoreError struct {
	Status        int
	Code, Message string
}

func (e *StoreError) Error() string { return e.Code + ": " + e.Message }

var (
	errNoSuchUpload = &StoreError{404, "NoSuchUpload", "The specified multipart upload does not exist."}
	errBadSignature = &StoreError{403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."}
)

// PartPin is the pin of part n of the multipart upload id to key: 404
// NoSuchUpload for no such upload (a completed one too), 403 for a part
// it has no URL for.
func (m *Museum) PartPin(id, key string, n int) (Pin, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mp := m.up.multipart[id]
	switch {
	case mp == nil || mp.key != key:
		return Pin{}, errNoSuchUpload
	case n < 1 || n > len(mp.parts):
		return Pin{}, errBadSignature
	}
	return mp.parts[n-1], nil
}

// PutPart stores part n of the multipart upload id.
func (m *Museum) PutPart(id string, n int, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mp := m.up.multipart[id]; mp != nil {
		mp.got[n] = body
	}
}

// CompletedPart is one part a completion lists.
type CompletedPart struct {
	Number int
	ETag   string
}

// CompleteUpload joins the parts listed into the object of upload id, as
// S3's CompleteMultipartUpload (UP.2): at least one part, in ascending
// order, each uploaded with that ETag (400 InvalidRequest,
// InvalidPartOrder, InvalidPart), then all but the last at 5 MiB or more
// (400 EntityTooSmall: a pinned part cannot be smaller, a part of a plain
// upload can). The object is what the listed parts make, even if
// parts were left out. It cannot be repeated: the upload is gone, and a
// second completion answers 404 NoSuchUpload. It returns the object's
// ETag.
func (m *Museum) CompleteUpload(id, key string, parts []CompletedPart) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mp := m.up.multipart[id]
	if mp == nil || mp.key != key {
		return "", errNoSuchUpload
	}
	if len(parts) == 0 {
		return "", &StoreError{400, "InvalidRequest", "You must specify at least one part"}
	}
	var data, sums []byte
	for i, p := range parts {
		part, ok := mp.got[p.Number]
		sum := md5.Sum(part)
		switch {
		case i > 0 && p.Number <= parts[i-1].Number:
			return "", &StoreError{400, "InvalidPartOrder", "The list of parts was not in ascending order."}
		case !ok || strings.Trim(p.ETag, `"`) != hex.EncodeToString(sum[:]):
			return "", &StoreError{400, "InvalidPart", "One or more of the specified parts could not be found."}
		}
		data = append(data, part...)
		sums = append(sums, sum[:]...)
	}
	// As the store: the list's order and its parts first, then their sizes.
	if partsTooSmall(mp, parts) {
		return "", &StoreError{400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size."}
	}
	all := md5.Sum(sums)
	etag := fmt.Sprintf("%s-%d", hex.EncodeToString(all[:]), len(parts))
	m.store.objects[key] = &Object{data: data, size: int64(len(data)), etag: etag}
	delete(m.up.multipart, id)
	return etag, nil
}

// PendingUploads counts multipart uploads minted and not completed.
func (m *Museum) PendingUploads() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.up.multipart)
}
