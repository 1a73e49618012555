package apiclient_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// counting is a deterministic random source: 1, 2, 3, …
type counting struct{ n byte }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		c.n++
		p[i] = c.n
	}
	return len(p), nil
}

// newAlbum creates an album of u's through the API and returns its id and key.
func status(err error) int {
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

func newAlbum(t *testing.T, c *apiclient.Client, u *enteapitest.User, rnd io.Reader) (int64, []byte) {
	t.Helper()
	key, err := keys.NewKey(rnd)
	require.NoError(t, err)
	ek, kn, err := keys.SecretboxSealFresh(rnd, key, u.MasterKey)
	require.NoError(t, err)
	col, err := c.CreateCollection(context.Background(), apiclient.NewCollection{EncryptedKey: ek, KeyDecryptionNonce: kn, Type: "album"})
	require.NoError(t, err)
	return col.ID, key
}

// sealed is a file encrypted for upload into an album.
type sealed struct {
	key, header, ct, thumbHeader, thumb []byte
	nf                                  apiclient.NewFile
}

func seal(t *testing.T, rnd io.Reader, albumID int64, albumKey, plain []byte) *sealed {
	t.Helper()
	s := &sealed{}
	var err error
	s.key, err = keys.NewKey(rnd)
	require.NoError(t, err)
	s.header, err = secretstream.NewHeader(rnd)
	require.NoError(t, err)
	r, err := secretstream.NewEncryptReader(s.key, s.header, bytes.NewReader(plain))
	require.NoError(t, err)
	s.ct, err = io.ReadAll(r)
	require.NoError(t, err)
	s.thumb, s.thumbHeader, err = secretstream.EncryptBlob(rnd, s.key, []byte("a thumbnail"))
	require.NoError(t, err)
	md, mdh, err := secretstream.EncryptBlob(rnd, s.key, []byte(`{"title":"a.jpg","fileType":0}`))
	require.NoError(t, err)
	ek, kn, err := keys.SecretboxSealFresh(rnd, s.key, albumKey)
	require.NoError(t, err)
	s.nf = apiclient.NewFile{CollectionID: albumID, EncryptedKey: ek, KeyDecryptionNonce: kn,
		Metadata: apiclient.SealedMetadata{EncryptedData: md, DecryptionHeader: mdh}}
	return s
}

// put mints a checksummed URL for data and PUTs it there.
func put(t *testing.T, c *apiclient.Client, data []byte) string {
	t.Helper()
	u, err := c.UploadURL(context.Background(), int64(len(data)), md5.Sum(data))
	require.NoError(t, err)
	_, err = c.PutUpload(context.Background(), u.URL, bytes.NewReader(data), int64(len(data)), md5.Sum(data))
	require.NoError(t, err)
	return u.ObjectKey
}

func (s *sealed) body(t *testing.T, fileKey, thumbKey string) []byte {
	t.Helper()
	s.nf.File = apiclient.UploadedObject{ObjectKey: fileKey, DecryptionHeader: s.header, Size: int64(len(s.ct))}
	s.nf.Thumbnail = apiclient.UploadedObject{ObjectKey: thumbKey, DecryptionHeader: s.thumbHeader, Size: int64(len(s.thumb))}
	b, err := s.nf.Body()
	require.NoError(t, err)
	return b
}

func TestUploadCommitAndReadBack(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	ctx := context.Background()
	rnd := &counting{}
	albumID, albumKey := newAlbum(t, c, u, rnd)
	plain := bytes.Repeat([]byte("photo"), 3000)
	f := seal(t, rnd, albumID, albumKey, plain)

	src, err := secretstream.NewEncryptReader(f.key, f.header, bytes.NewReader(plain))
	require.NoError(t, err)
	sum := md5.Sum(f.ct)
	url, err := c.UploadURL(ctx, int64(len(f.ct)), sum)
	require.NoError(t, err)
	etag, err := c.PutUpload(ctx, url.URL, src, int64(len(f.ct)), sum)
	require.NoError(t, err)
	assert.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, etag, "the ETag comes back verbatim, quotes and all")
	body := f.body(t, url.ObjectKey, put(t, c, f.thumb))
	got, err := c.CreateFile(ctx, body)
	require.NoError(t, err)
	assert.Equal(t, u.ID, got.OwnerID)
	require.NotNil(t, got.Info)
	assert.Equal(t, int64(len(f.ct)), got.Info.FileSize)

	o, err := c.DownloadFile(ctx, got.ID)
	require.NoError(t, err)
	r, err := secretstream.NewReader(f.key, f.header, o.Body, o.Length)
	require.NoError(t, err)
	back, err := io.ReadAll(r)
	o.Body.Close()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(plain, back), "the upload downloads and decrypts to its plaintext")
	assert.Zero(t, s.Leaks(), "no PUT carried the account token")
}

// The stored body is sent byte for byte, not re-encoded: what was persisted
// before a lost answer is exactly what goes again.
func TestCreateFileSendsTheStoredBytes(t *testing.T) {
	var got [][]byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, b)
		_, _ = io.WriteString(w, `{"id":7}`)
	}))
	defer hs.Close()
	c, err := apiclient.New(hs.URL, &http.Client{}, "test")
	require.NoError(t, err)
	f := seal(t, &counting{}, 5, bytes.Repeat([]byte{1}, 32), []byte("x"))
	body := f.body(t, "1/a", "1/b")
	spaced := append([]byte("  \n"), body...) // as a file on disk might hold it
	for _, b := range [][]byte{body, spaced} {
		out, err := c.CreateFile(context.Background(), b)
		require.NoError(t, err)
		assert.Equal(t, int64(7), out.ID)
	}
	require.Len(t, got, 2)
	assert.Equal(t, body, got[0])
	assert.Equal(t, spaced, got[1])
}

func TestNewFileBodyIsDeterministic(t *testing.T) {
	one := seal(t, &counting{}, 5, bytes.Repeat([]byte{1}, 32), []byte("x"))
	two := seal(t, &counting{}, 5, bytes.Repeat([]byte{1}, 32), []byte("x"))
	a, b := one.body(t, "1/a", "1/b"), two.body(t, "1/a", "1/b")
	assert.Equal(t, a, b)
	assert.True(t, strings.HasPrefix(string(a), `{"collectionID":5,"encryptedKey":"`), "fields in a fixed order: %s", a)
	assert.Contains(t, string(a), `"file":{"objectKey":"1/a","decryptionHeader":"`)
	assert.NotContains(t, string(a), "magicMetadata", "no envelope when there is none")
}

// museum checks none of the crypto (UP.4): every malformed body is refused
// before a request is made.
func TestCreateFileRefusesMalformedBodies(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	good := func() *sealed { return seal(t, &counting{}, 5, bytes.Repeat([]byte{1}, 32), []byte("x")) }
	mm := func() *apiclient.MagicMetadata {
		return &apiclient.MagicMetadata{Version: 1, Count: 1, Data: make([]byte, 20), Header: make([]byte, 24)}
	}
	for name, spoil := range map[string]func(n *apiclient.NewFile){
		"no album":            func(n *apiclient.NewFile) { n.CollectionID = 0 },
		"short file key":      func(n *apiclient.NewFile) { n.EncryptedKey = n.EncryptedKey[:32] },
		"no key nonce":        func(n *apiclient.NewFile) { n.KeyDecryptionNonce = nil },
		"no file object":      func(n *apiclient.NewFile) { n.File.ObjectKey = "" },
		"no thumbnail object": func(n *apiclient.NewFile) { n.Thumbnail.ObjectKey = "" },
		"one object for both": func(n *apiclient.NewFile) { n.Thumbnail.ObjectKey = n.File.ObjectKey },
		"short file header":   func(n *apiclient.NewFile) { n.File.DecryptionHeader = n.File.DecryptionHeader[:10] },
		"thumbnail size 0":    func(n *apiclient.NewFile) { n.Thumbnail.Size = 0 },
		"file too small":      func(n *apiclient.NewFile) { n.File.Size = 16 },
		"no metadata":         func(n *apiclient.NewFile) { n.Metadata.EncryptedData = nil },
		"short meta header":   func(n *apiclient.NewFile) { n.Metadata.DecryptionHeader = make([]byte, 23) },
		"magic version 0":     func(n *apiclient.NewFile) { n.PubMagicMetadata = mm(); n.PubMagicMetadata.Version = 0 },
		"magic count 0":       func(n *apiclient.NewFile) { n.MagicMetadata = mm(); n.MagicMetadata.Count = 0 },
		"magic data short":    func(n *apiclient.NewFile) { n.PubMagicMetadata = mm(); n.PubMagicMetadata.Data = make([]byte, 16) },
		"magic header short":  func(n *apiclient.NewFile) { n.MagicMetadata = mm(); n.MagicMetadata.Header = nil },
	} {
		t.Run(name, func(t *testing.T) {
			f := good()
			ok := f.body(t, "1/a", "1/b") // valid as made
			require.NotEmpty(t, ok)
			spoil(&f.nf)
			_, err := f.nf.Body()
			assert.ErrorIs(t, err, apiclient.ErrBadCommit)
			raw, merr := jsonMarshal(f.nf)
			require.NoError(t, merr)
			_, err = c.CreateFile(context.Background(), []byte(raw))
			assert.ErrorIs(t, err, apiclient.ErrBadCommit)
		})
	}
	_, err := c.CreateFile(context.Background(), []byte("not json"))
	assert.ErrorIs(t, err, apiclient.ErrBadCommit)
	assert.Zero(t, s.Requests("POST /files"), "nothing malformed is ever sent")
}

// The smallest of everything passes: an empty file (one empty FINAL
// message) and magic metadata of version 1 with one field.
func TestNewFileSmallestValid(t *testing.T) {
	f := seal(t, &counting{}, 5, bytes.Repeat([]byte{1}, 32), nil)
	require.Len(t, f.ct, 17)
	f.body(t, "1/a", "1/b")
	mm := &apiclient.MagicMetadata{Version: 1, Count: 1, Data: make([]byte, 17), Header: make([]byte, 24)}
	f.nf.PubMagicMetadata, f.nf.MagicMetadata = mm, mm
	assert.NoError(t, f.nf.Validate())
}

// A presigned URL's query is a credential: no failure of an upload shows
// it, whatever breaks.
func TestUploadErrorsNeverShowThePresignedQuery(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	ctx := context.Background()
	data := []byte("object bytes")
	sum := md5.Sum(data)
	u, err := c.UploadURL(ctx, int64(len(data)), sum)
	require.NoError(t, err)
	require.Contains(t, u.URL, "X-Amz-Signature")
	check := func(what string, err error) {
		t.Helper()
		require.Error(t, err, what)
		assert.NotContains(t, err.Error(), "Signature", what)
		assert.NotContains(t, err.Error(), "?", what)
	}
	_, err = c.PutUpload(ctx, u.URL, bytes.NewReader([]byte("other bytes!")), int64(len(data)), sum)
	check("refused by the store", err)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "BadDigest", ae.Code)
	assert.True(t, ae.ObjectStore)

	s.InjectUpload(enteapitest.StepPut, enteapitest.LoseResponse())
	_, err = c.PutUpload(ctx, u.URL, bytes.NewReader(data), int64(len(data)), sum)
	check("connection lost", err)
	assert.Equal(t, retry.Transient, retry.Classify(err))

	_, err = c.PutUpload(ctx, u.URL, &failing{}, int64(len(data)), sum)
	check("source failed", err)
	_, err = c.PutUpload(ctx, u.URL+"\x7f", bytes.NewReader(data), int64(len(data)), sum)
	check("malformed URL", err)
	err = c.CompleteMultipart(ctx, s.Store.URL+"/store/1/x?uploadId=none&X-Amz-Signature=s", []string{`"a"`})
	check("no such upload", err)
	s.Close()
	_, err = c.PutUpload(ctx, u.URL, bytes.NewReader(data), int64(len(data)), sum)
	check("store gone", err)
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

// A redirect from the store is not followed: the object would go to a host
// nobody chose.
func TestPutUploadFollowsNoRedirect(t *testing.T) {
	elsewhere := 0
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere++ }))
	defer other.Close()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer hs.Close()
	c, err := apiclient.New(hs.URL, &http.Client{}, "test")
	require.NoError(t, err)
	data := []byte("x")
	_, err = c.PutUpload(context.Background(), hs.URL+"/b/k?X-Amz-Signature=s", bytes.NewReader(data), 1, md5.Sum(data))
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 307, ae.Status)
	assert.Zero(t, elsewhere)
}

// A minting answer that lacks what the upload needs is an error, not a
// panic further on.
func TestMintingAnswersAreChecked(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	ctx := context.Background()
	s.Inject("POST /files/upload-url", enteapitest.StatusBody(200, `{"objectKey":"1/x"}`))
	_, err := c.UploadURL(ctx, 10, [16]byte{})
	assert.Error(t, err)
	s.Inject("POST /files/multipart-upload-url",
		enteapitest.StatusBody(200, `{"objectKey":"1/x","partURLs":["a"],"completeURL":"c"}`),
		enteapitest.StatusBody(200, `{"objectKey":"1/x","partURLs":["a","b"]}`))
	for range 2 {
		_, err = c.MultipartUploadURL(ctx, 6<<20, 5<<20, make([][16]byte, 2))
		assert.Error(t, err)
	}
	s.Inject("POST /files", enteapitest.StatusBody(200, `{}`))
	f := seal(t, &counting{}, 5, bytes.Repeat([]byte{1}, 32), []byte("x"))
	_, err = c.CreateFile(ctx, f.body(t, "1/a", "1/b"))
	assert.Error(t, err, "an answer without a file id")
	s.Inject("POST /collections", enteapitest.StatusBody(200, `{"collection":{}}`))
	_, err = c.CreateCollection(ctx, apiclient.NewCollection{EncryptedKey: make([]byte, 48), KeyDecryptionNonce: make([]byte, 24), Type: "album"})
	assert.Error(t, err, "an answer without an album id")
}

// museum answers a bad album key with a 500 a retry would repeat: quak
// refuses it first.
func TestCreateCollectionRefusesBadRequests(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	for name, nc := range map[string]apiclient.NewCollection{
		"short key":    {EncryptedKey: make([]byte, 32), KeyDecryptionNonce: make([]byte, 24), Type: "album"},
		"short nonce":  {EncryptedKey: make([]byte, 48), KeyDecryptionNonce: make([]byte, 12), Type: "album"},
		"unknown type": {EncryptedKey: make([]byte, 48), KeyDecryptionNonce: make([]byte, 24), Type: "shelf"},
	} {
		_, err := c.CreateCollection(context.Background(), nc)
		assert.Error(t, err, name)
	}
	assert.Zero(t, s.Requests("POST /collections"))
}

func TestAddFilesBatchBounds(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, _ := login(t, s)
	require.NoError(t, c.AddFiles(context.Background(), 5, nil), "nothing to add is no call")
	err := c.AddFiles(context.Background(), 5, make([]apiclient.CollectionFileItem, apiclient.MaxAddFiles+1))
	assert.Error(t, err)
	assert.Zero(t, s.Requests("POST /collections/add-files"))
	full := make([]apiclient.CollectionFileItem, apiclient.MaxAddFiles)
	for i := range full {
		full[i] = apiclient.CollectionFileItem{ID: int64(i + 1), EncryptedKey: make([]byte, 48), KeyDecryptionNonce: make([]byte, 24)}
	}
	err = c.AddFiles(context.Background(), 5, full)
	assert.Equal(t, 404, status(err), "a full batch is sent (to an album that is not there)")
	assert.Equal(t, 1, s.Requests("POST /collections/add-files"))
}

func TestCollectionReadsOneAlbum(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	a := u.AddAlbum("Holidays")
	got, err := c.Collection(context.Background(), a.ID)
	require.NoError(t, err)
	assert.Equal(t, a.ID, got.ID)
	assert.Positive(t, got.UpdationTime)
	_, err = c.Collection(context.Background(), a.ID+1000)
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 404, ae.Status)
}

func TestHeadroom(t *testing.T) {
	now := time.UnixMicro(1_000_000)
	limit := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name string
		d    apiclient.UserDetails
		want int64
	}{
		{"plan", apiclient.UserDetails{Usage: 30, Subscription: apiclient.Subscription{Storage: 100, ExpiryTime: 2_000_000}}, 70},
		{"bonus", apiclient.UserDetails{Usage: 30, StorageBonus: 5, Subscription: apiclient.Subscription{Storage: 100, ExpiryTime: 2_000_000}}, 75},
		{"over", apiclient.UserDetails{Usage: 130, Subscription: apiclient.Subscription{Storage: 100, ExpiryTime: 2_000_000}}, -30},
		{"expired", apiclient.UserDetails{Usage: 30, StorageBonus: 50, Subscription: apiclient.Subscription{Storage: 100, ExpiryTime: 999_999}}, 20},
		{"expires now", apiclient.UserDetails{Usage: 30, Subscription: apiclient.Subscription{Storage: 100, ExpiryTime: 1_000_000}}, 70},
		{"family", family(nil, 2_000_000), 40},
		{"family member limit", family(limit(25), 2_000_000), 15},
		{"family member over the limit", family(limit(5), 2_000_000), -5},
		{"family limit above the rest", family(limit(90), 2_000_000), 40},
		{"family plan over", family(nil, 999_999), -60},
		{"family bonus", func() apiclient.UserDetails { d := family(nil, 2_000_000); d.StorageBonus = 7; return d }(), 47},
	} {
		assert.Equal(t, tc.want, tc.d.Headroom(now), tc.name)
	}
}

// family is the details of "me" in a family of 100 bytes where "them"
// uses 50 and "me" 10, with the plan the admin's (the member's own
// subscription says nothing).
func family(limit *int64, expiry int64) apiclient.UserDetails {
	return apiclient.UserDetails{Email: "me", Usage: 10, Subscription: apiclient.Subscription{Storage: 1000, ExpiryTime: 2_000_000},
		FamilyData: &apiclient.FamilyData{Storage: 100, ExpiryTime: expiry, Members: []apiclient.FamilyMember{
			{Email: "them", Usage: 50, IsAdmin: true}, {Email: "me", Usage: 10, StorageLimit: limit}}}}
}

func TestUserDetailsFromTheServer(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	u.AddAlbum("a").AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: make([]byte, 1000)})
	d, err := c.UserDetails(context.Background())
	require.NoError(t, err)
	assert.Equal(t, u.Email, d.Email)
	assert.Equal(t, u.Usage(), d.Usage)
	assert.Positive(t, d.Usage)
	assert.Equal(t, int64(10<<30), d.Subscription.Storage, "a self-hosted museum's plan")
	assert.Equal(t, d.Subscription.Storage-d.Usage, d.Headroom(time.Now()))
	assert.Equal(t, 1, s.Requests("GET /users/details/v2"))
	u.ExpirePlan()
	_, err = c.UploadURL(context.Background(), 10, [16]byte{})
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 402, ae.Status, "any non-2xx is an ApiError: %v", fmt.Sprint(err))
}

// A run that stops at a fatal error cancels its uploads in flight with
// that error as their context's cause, and each gets it back: a store
// request must not mark it the store's (it is museum's, and it is shared).
func TestAStoreRequestLeavesAnErrorItDidNotMakeAlone(t *testing.T) {
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer store.Close()
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	c := s.Client(nil)
	fatal := &errs.ApiError{Method: "POST", Path: "/files", Status: http.StatusUnauthorized}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(fatal)
	data := []byte("x")
	_, err := c.PutUpload(ctx, store.URL+"/object", bytes.NewReader(data), 1, md5.Sum(data))
	require.Error(t, err)
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		assert.Same(t, fatal, ae, "the cause itself")
	}
	assert.False(t, fatal.ObjectStore, "museum's refusal stays museum's")
}
