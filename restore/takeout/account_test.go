package takeout

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/restore"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

// account is a fake server with one empty account to import into, and a
// journal folder of its own.
type account struct {
	t       *testing.T
	s       *enteapitest.Server
	u       *enteapitest.User
	journal string
	mu      sync.Mutex
	events  []restore.Event
}

func newAccount(t *testing.T) *account {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{PageSize: 3})
	t.Cleanup(s.Close)
	return &account{t: t, s: s, u: s.AddUser("gran@example.org", "pw", enteapitest.UserOptions{}),
		journal: filepath.Join(t.TempDir(), "journal")}
}

func (a *account) client() *apiclient.Client { return a.s.Client(nil).WithToken(a.u.Token()) }

func (a *account) keys() catalog.Keys {
	return catalog.Keys{UserID: a.u.ID, MasterKey: a.u.MasterKey, PublicKey: a.u.PublicKey, SecretKey: a.u.SecretKey}
}

// noTools finds no program: videos and HEIC get Ente's placeholder.
var noTools = thumbnails.Tools{
	LookPath: func(string) (string, error) { return "", errors.New("not found") },
	Run:      func(context.Context, string, ...string) ([]byte, error) { return nil, errors.New("no") },
}

func (a *account) options() restore.ImportOptions {
	p := retry.Default()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	p.Rand = func() float64 { return 0 }
	tools := noTools
	// 4 MiB: originals over 1.33 MiB are uploaded as they are read.
	return restore.ImportOptions{Policy: p, Tools: &tools, Concurrency: 2, Journal: a.journal, Memory: 4 << 20,
		Target: restore.Target{Client: a.client(), Keys: a.keys(), Email: a.u.Email, Endpoint: a.s.URL()},
		Events: func(e restore.Event) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.events = append(a.events, e)
		}}
}

// importWith opens paths and imports them with o.
func (a *account) importWith(paths []string, topt Options, o restore.ImportOptions) (*restore.Summary, error) {
	a.t.Helper()
	tk := openTakeout(a.t, paths, topt)
	a.mu.Lock()
	a.events = nil
	a.mu.Unlock()
	return restore.Import(a.t.Context(), o, tk.Albums, tk.Originals, tk)
}

func (a *account) mustImport(paths []string) *restore.Summary {
	a.t.Helper()
	sum, err := a.importWith(paths, Options{}, a.options())
	require.NoError(a.t, err)
	require.Empty(a.t, sum.Failures)
	return sum
}

// accountFile is a file of the account as a test compares it.
type accountFile struct {
	meta     catalogMeta
	albums   []string
	archived bool
	data     []byte
	id       int64
}

type catalogMeta = struct {
	Title        string
	FileType     int
	CreationTime int64
	Latitude     *float64
	Caption      string
	Offset       string
	Hash         string
}

// files lists the account's files, each with the albums (by name) that
// hold it, its archived state and its plaintext.
func (a *account) files() []*accountFile {
	a.t.Helper()
	ctx := a.t.Context()
	c := a.client()
	cols, err := c.Collections(ctx, 0)
	require.NoError(a.t, err)
	byID := map[int64]*accountFile{}
	for i := range cols {
		if cols[i].IsDeleted {
			continue
		}
		al, err := catalog.OpenAlbum(&cols[i], a.keys())
		require.NoError(a.t, err)
		for _, it := range a.items(al) {
			f := byID[it.FileID]
			if f == nil {
				f = &accountFile{id: it.FileID, meta: catalogMeta{Title: it.Meta.Title, FileType: it.Meta.FileType,
					CreationTime: it.Meta.CreationTime, Latitude: it.Meta.Latitude, Caption: it.Meta.Caption,
					Offset: it.Meta.Offset, Hash: it.Meta.Hash}}
				f.archived = archived(a.t, it)
				f.data = a.download(it)
				byID[it.FileID] = f
			}
			f.albums = append(f.albums, al.Name)
		}
	}
	var out []*accountFile
	for _, f := range byID {
		sort.Strings(f.albums)
		out = append(out, f)
	}
	return out
}

func (a *account) items(al *catalog.Album) []*catalog.Item {
	var out []*catalog.Item
	since := int64(0)
	for {
		page, err := a.client().Diff(a.t.Context(), al.ID, since)
		require.NoError(a.t, err)
		for i := range page.Diff {
			if page.Diff[i].IsDeleted {
				continue
			}
			it, err := catalog.OpenItem(&page.Diff[i], al)
			require.NoError(a.t, err)
			out = append(out, it)
		}
		next := apiclient.DiffCursor(since, page.Diff)
		if !page.HasMore || next == since {
			return out
		}
		since = next
	}
}

// archived reads a file's own visibility from its private magic metadata.
func archived(t *testing.T, it *catalog.Item) bool {
	t.Helper()
	mm := it.Raw.MagicMetadata
	if mm == nil {
		return false
	}
	b, err := secretstream.OpenBlob(it.Key, mm.Header, mm.Data)
	require.NoError(t, err)
	var v struct {
		Visibility int `json:"visibility"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	return v.Visibility == 1
}

func (a *account) download(it *catalog.Item) []byte {
	obj, err := a.client().DownloadFile(a.t.Context(), it.FileID)
	require.NoError(a.t, err)
	defer func() { _ = obj.Body.Close() }()
	rd, err := secretstream.NewReader(it.Key, it.Header, obj.Body, it.Size)
	require.NoError(a.t, err)
	b, err := io.ReadAll(rd)
	require.NoError(a.t, err)
	return b
}

// views are the account's files as the fixture's expectations read.
func (a *account) views() []*originalView {
	var out []*originalView
	for _, f := range a.files() {
		v := &originalView{title: f.meta.Title, typ: f.meta.FileType,
			created: time.UnixMicro(f.meta.CreationTime).UTC().Format(time.RFC3339), offset: f.meta.Offset,
			caption: f.meta.Caption, archived: f.archived, albums: strings.Join(f.albums, ", ")}
		if f.meta.Latitude != nil {
			v.lat = *f.meta.Latitude
		}
		out = append(out, v)
	}
	sortViews(out)
	return out
}
