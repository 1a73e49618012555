package contract_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/publink"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
)

// status is an API error's HTTP status, 0 for anything else.
func status(err error) int {
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// SRP login, as quak does it: the attributes, a session with a padded A,
// the proof both ways (account.Login checks M2), the token opened from its
// sealed box and the keys unwrapped; a wrong password is refused.
func TestContractLoginSRP(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			email, password := s.account()
			se, err := login(t, s, password)
			require.NoError(t, err)
			a := se.acct
			assert.Positive(t, a.UserID)
			assert.Equal(t, strings.ToLower(email), a.Email)
			assert.Len(t, a.MasterKey, 32)
			assert.Len(t, a.SecretKey, 32)
			assert.Len(t, a.PublicKey, 32)
			assert.NotEmpty(t, a.Token)
			set, err := se.api.SessionValidity(context.Background())
			require.NoError(t, err, "the token works")
			assert.True(t, set)

			_, err = login(t, s, password+" but wrong")
			assert.ErrorIs(t, err, account.ErrWrongPassword)
		})
	}
}

// A diff page: a new album lists with its sealed name, its diff has each
// file once with museum's sizes (size 0 in the parts, the ciphertext
// sizes in info), keys that open under the album key and metadata that
// opens under the file key; past the cursor the diff is empty.
func TestContractDiffPage(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			ctx := context.Background()
			a := newAlbum(t, se)
			ups := map[int64]*upload{}
			for i := range 2 {
				up := uploadFile(t, se, a, fmt.Sprintf("IMG_%d.jpg", i), []byte(fmt.Sprintf("photo %d", i)), enteapitest.FakeJPEG("t"))
				ups[up.id] = up
			}

			cs, err := se.api.Collections(ctx, 0)
			require.NoError(t, err)
			var listed *apiclient.Collection
			for i := range cs {
				if cs[i].ID == a.id {
					listed = &cs[i]
				}
			}
			require.NotNil(t, listed, "the new album is listed")
			assert.Equal(t, a.id, listed.ID)
			assert.Equal(t, se.acct.UserID, listed.Owner.ID)
			assert.Equal(t, "album", listed.Type)
			assert.False(t, listed.IsDeleted)
			name, err := keys.SecretboxOpen(listed.EncryptedName, listed.NameDecryptionNonce, a.key)
			require.NoError(t, err)
			assert.Equal(t, a.name, string(name))

			page, err := se.api.Diff(ctx, a.id, 0)
			require.NoError(t, err)
			assert.False(t, page.HasMore)
			require.Len(t, page.Diff, 2)
			for _, f := range page.Diff {
				up := ups[f.ID]
				require.NotNil(t, up, "file %d was uploaded here", f.ID)
				assert.Equal(t, se.acct.UserID, f.OwnerID)
				assert.Equal(t, a.id, f.CollectionID)
				assert.False(t, f.IsDeleted)
				assert.Positive(t, f.UpdationTime)
				assert.Zero(t, f.File.Size, "museum sends size 0 in diffs")
				require.NotNil(t, f.Info)
				assert.Equal(t, int64(len(up.ciphertext)), f.Info.FileSize)
				assert.Equal(t, int64(len(up.thumb)), f.Info.ThumbSize)
				assert.Equal(t, up.header, []byte(f.File.DecryptionHeader))
				assert.Equal(t, up.thumbHeader, []byte(f.Thumbnail.DecryptionHeader))
				key, err := keys.SecretboxOpen(f.EncryptedKey, f.KeyDecryptionNonce, a.key)
				require.NoError(t, err, "the file key opens under the album key")
				assert.Equal(t, up.key, key)
				meta, err := secretstream.OpenBlob(key, f.Metadata.DecryptionHeader, f.Metadata.EncryptedData)
				require.NoError(t, err)
				var md struct {
					Title string `json:"title"`
				}
				require.NoError(t, json.Unmarshal(meta, &md))
				assert.Equal(t, up.title, md.Title)
			}
			cursor := apiclient.DiffCursor(0, page.Diff)
			next, err := se.api.Diff(ctx, a.id, cursor)
			require.NoError(t, err)
			assert.Empty(t, next.Diff, "nothing after the cursor")
			assert.False(t, next.HasMore)

			one, err := se.api.CollectionFile(ctx, a.id, page.Diff[0].ID)
			require.NoError(t, err)
			assert.Equal(t, page.Diff[0].EncryptedKey, one.EncryptedKey)
			_, err = se.api.CollectionFile(ctx, a.id, page.Diff[0].ID+1_000_000_000)
			assert.Equal(t, http.StatusNotFound, status(err), "no such file in the album")
		})
	}
}

// A download: museum's 307 to the object store, followed without the
// token, the whole object at the length info gave, and it decrypts to
// what was uploaded.
func TestContractDownload(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			up := uploadFile(t, se, newAlbum(t, se), "big.jpg", photo(t), enteapitest.FakeJPEG("big"))
			o, err := se.api.DownloadFile(context.Background(), up.id)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, o.Status)
			assert.Equal(t, int64(len(up.ciphertext)), o.Length)
			assert.NotEmpty(t, o.URL, "served by the object store, through a redirect")
			assert.NotContains(t, o.URL, se.acct.Token, "the store never sees the token")
			body := readAll(t, o)
			require.Equal(t, up.ciphertext, body)
			r, err := secretstream.NewReader(up.key, up.header, bytes.NewReader(body), int64(len(body)))
			require.NoError(t, err)
			plain, err := io.ReadAll(r)
			require.NoError(t, err)
			assert.Equal(t, up.plaintext, plain)

			th, err := se.api.DownloadThumbnail(context.Background(), up.id)
			require.NoError(t, err)
			assert.Equal(t, up.thumb, readAll(t, th))
		})
	}
}

// A range: 206 with the part asked for, across the two messages of the
// stream, its Content-Range and the object's ETag, through museum and
// from the store's URL directly; a range past the end is 416.
func TestContractRange(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			ctx := context.Background()
			up := uploadFile(t, se, newAlbum(t, se), "ranged.jpg", photo(t), enteapitest.FakeJPEG("r"))
			size := int64(len(up.ciphertext))
			whole, err := se.api.DownloadFile(ctx, up.id)
			require.NoError(t, err)
			readAll(t, whole)
			require.NotEmpty(t, whole.ETag)

			from, to := int64(4<<20), int64(4<<20+100) // the first message ends at 4194321
			o, err := se.api.DownloadFileRange(ctx, up.id, from, to)
			require.NoError(t, err)
			assert.Equal(t, http.StatusPartialContent, o.Status)
			assert.Equal(t, fmt.Sprintf("bytes %d-%d/%d", from, to, size), o.ContentRange)
			assert.Equal(t, whole.ETag, o.ETag, "one object, one ETag")
			assert.Equal(t, up.ciphertext[from:to+1], readAll(t, o))

			direct, err := se.api.DownloadObjectRange(ctx, whole.URL, size-10, size-1)
			require.NoError(t, err)
			assert.Equal(t, http.StatusPartialContent, direct.Status)
			assert.Equal(t, up.ciphertext[size-10:], readAll(t, direct))

			_, err = se.api.DownloadObjectRange(ctx, whole.URL, size, size+10)
			assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, status(err))
		})
	}
}

// A thumbnail upload, as quak's repair does it: a smaller thumbnail
// through an unpinned URL, PUT /files/thumbnail; the new bytes are served
// and the header listed, files.info keeps the size at upload, and a
// thumbnail larger than the one recorded is refused with 500.
func TestContractThumbnailUpload(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			ctx := context.Background()
			a := newAlbum(t, se)
			up := uploadFile(t, se, a, "thumb.jpg", []byte("a photo"), enteapitest.SampleJPEG(200, 150, 1))
			small := enteapitest.FakeJPEG("smaller")
			require.Less(t, len(small), len(up.thumbPlain))
			sealed, header, err := secretstream.EncryptBlob(rand.Reader, up.key, small)
			require.NoError(t, err)
			urls, err := se.api.UploadURLs(ctx, 2)
			require.NoError(t, err)
			require.Len(t, urls, 2)
			require.NoError(t, se.api.PutObject(ctx, urls[0].URL, sealed))
			require.NoError(t, se.api.UpdateThumbnail(ctx, up.id, urls[0].ObjectKey, header))

			th, err := se.api.DownloadThumbnail(ctx, up.id)
			require.NoError(t, err)
			got := readAll(t, th)
			assert.Equal(t, sealed, got)
			plain, err := secretstream.OpenBlob(up.key, header, got)
			require.NoError(t, err)
			assert.Equal(t, small, plain)
			f, err := se.api.CollectionFile(ctx, a.id, up.id)
			require.NoError(t, err)
			assert.Equal(t, header, []byte(f.Thumbnail.DecryptionHeader))
			info, err := se.api.FilesInfo(ctx, []int64{up.id})
			require.NoError(t, err)
			assert.Equal(t, int64(len(up.thumb)), info[up.id].ThumbSize, "files.info keeps the thumbnail's size at upload")

			larger := append(bytes.Clone(sealed), make([]byte, 64)...)
			require.NoError(t, se.api.PutObject(ctx, urls[1].URL, larger))
			err = se.api.UpdateThumbnail(ctx, up.id, urls[1].ObjectKey, header)
			assert.Equal(t, http.StatusInternalServerError, status(err), "larger than the thumbnail recorded")
		})
	}
}

// A file upload and commit: pinned URLs refuse other bytes; the commit's
// answer is the file with its id, owner, album and sizes; the same body
// sent again gives the same file and adds nothing.
func TestContractFileUploadAndCommit(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			ctx := context.Background()
			a := newAlbum(t, se)
			up := sealFile(t, "commit.jpg", photo(t), enteapitest.FakeJPEG("c"))

			sum := [16]byte{1}
			u, err := se.api.UploadURL(ctx, int64(len(up.thumb)), sum)
			require.NoError(t, err)
			_, err = se.api.PutUpload(ctx, u.URL, bytes.NewReader(up.thumb), int64(len(up.thumb)), sum)
			assert.Error(t, err, "the store takes only the bytes whose MD5 the URL was minted for")

			body := up.commitBody(t, a, put(t, se, up.ciphertext), put(t, se, up.thumb))
			f, err := se.api.CreateFile(ctx, body)
			require.NoError(t, err)
			assert.Positive(t, f.ID)
			assert.Equal(t, se.acct.UserID, f.OwnerID)
			assert.Equal(t, a.id, f.CollectionID)
			assert.Equal(t, int64(len(up.ciphertext)), f.File.Size)
			assert.Equal(t, int64(len(up.thumb)), f.Thumbnail.Size)
			require.NotNil(t, f.Info)
			assert.Equal(t, int64(len(up.ciphertext)), f.Info.FileSize)
			assert.Positive(t, f.UpdationTime)

			again, err := se.api.CreateFile(ctx, body)
			require.NoError(t, err, "the same commit again")
			assert.Equal(t, f.ID, again.ID, "is the same file")
			page, err := se.api.Diff(ctx, a.id, 0)
			require.NoError(t, err)
			require.Len(t, page.Diff, 1, "and adds nothing")
			assert.Equal(t, f.ID, page.Diff[0].ID)
		})
	}
}

// A public link: its owner makes it (POST /collections/share-url); a
// reader with only the link reads the album's name under the key in the
// link, its diff, and the original through a redirect; turned off, the
// link answers 410.
func TestContractPublicLink(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			ctx := context.Background()
			a := newAlbum(t, se)
			up := uploadFile(t, se, a, "shared.jpg", []byte("a shared photo"), enteapitest.FakeJPEG("s"))
			code, body := call(t, s, se, "POST", "/collections/share-url", map[string]any{"collectionID": a.id})
			require.Equal(t, http.StatusOK, code, "%s", body)
			var made struct {
				Result struct {
					URL            string `json:"url"`
					EnableDownload bool   `json:"enableDownload"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(body, &made))
			assert.True(t, made.Result.EnableDownload)
			t.Cleanup(func() { call(t, s, se, "DELETE", fmt.Sprintf("/collections/share-url/%d", a.id), nil) })

			link, err := publink.Parse(made.Result.URL + "#" + publink.EncodeKey(a.key))
			require.NoError(t, err)
			assert.Equal(t, a.key, link.Key)
			lc, err := apiclient.NewLinkClient(s.endpoint(), s.client(), "quak-contract/1", link.AccessToken)
			require.NoError(t, err)
			info, err := lc.Info(ctx)
			require.NoError(t, err)
			assert.Equal(t, a.id, info.Collection.ID)
			name, err := keys.SecretboxOpen(info.Collection.EncryptedName, info.Collection.NameDecryptionNonce, link.Key)
			require.NoError(t, err)
			assert.Equal(t, a.name, string(name))
			assert.True(t, info.Settings.EnableDownload)
			assert.False(t, info.Settings.PasswordEnabled)

			page, err := lc.Diff(ctx, 0)
			require.NoError(t, err)
			require.Len(t, page.Diff, 1)
			assert.Equal(t, up.id, page.Diff[0].ID)
			assert.Nil(t, page.Diff[0].MagicMetadata, "a link never sees private metadata")
			o, err := lc.DownloadFile(ctx, up.id)
			require.NoError(t, err)
			assert.Equal(t, up.ciphertext, readAll(t, o))

			code, body = call(t, s, se, "DELETE", fmt.Sprintf("/collections/share-url/%d", a.id), nil)
			require.Equal(t, http.StatusOK, code, "%s", body)
			_, err = lc.Info(ctx)
			assert.ErrorIs(t, err, apiclient.ErrLinkDisabled)
		})
	}
}

// Refusals in museum's shapes: no token is 401 from the middleware, a
// diff of an album that is not the caller's is 404.
func TestContractRefusals(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			ctx := context.Background()
			anon, err := apiclient.New(s.endpoint(), s.client(), "contract")
			require.NoError(t, err)
			_, err = anon.Collections(ctx, 0)
			assert.Equal(t, http.StatusUnauthorized, status(err))
			_, err = anon.WithToken("bm90IGEgdG9rZW4gb2YgdGhpcyBzZXJ2ZXIgYXQgYWxsIQ==").Collections(ctx, 0)
			assert.Equal(t, http.StatusUnauthorized, status(err))
			_, err = se.api.Diff(ctx, 1, 0)
			assert.Equal(t, http.StatusNotFound, status(err))
		})
	}
}
