package backup

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/blake2b"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// unit is the bench the collaborators' own tests share: a backup folder in
// a temp dir with its state and a real disk, what a run gives every
// collaborator (names, albums, views, tally, commit), and a library held
// in memory whose files are sealed as Ente seals them. No server runs.
type unit struct {
	t      *testing.T
	dir    string
	f      *folder.Folder
	st     *state.Store
	disk   *realDisk
	tally  *tally
	names  *names
	albums *albumSet
	exp    *expected
	views  *views.Keeper
	parts  *partNames
	lib    *memLib

	mu      sync.Mutex
	events  []Event
	commits int
}

// newUnit is a bench with views vo (the default sidecars when none).
func newUnit(t *testing.T, vo ...views.Options) *unit {
	t.Helper()
	dir := t.TempDir()
	f := folder.At(dir)
	require.NoError(t, os.MkdirAll(f.Temp(), 0o700))
	st, err := f.OpenState()
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	u := &unit{t: t, dir: dir, f: f, st: st, disk: newRealDisk(f), exp: &expected{}, lib: newMemLib()}
	u.tally = newTally(func(e Event) { u.mu.Lock(); u.events = append(u.events, e); u.mu.Unlock() }, time.Unix(0, 0))
	u.names = newNames(st)
	u.albums = &albumSet{root: dir, st: st, disk: u.disk}
	require.NoError(t, u.albums.load())
	var o views.Options
	if len(vo) > 0 {
		o = vo[0]
	}
	o.Zone = time.UTC
	u.views = views.NewKeeper(views.Config{Dir: dir, DirName: dir, Options: o, UserID: 1, Store: st, Disk: u.disk,
		Albums: u.albums.all, PartsExist: u.albums.partsExist, Taken: u.names.taken, Record: u.record,
		DiskError: func(err error) error { return diskError(dir, err) }, Tell: func(views.Note) {},
		Now: func() time.Time { return time.Unix(1_700_000_000, 0) }})
	u.parts = &partNames{root: dir, names: u.names, disk: u.disk, views: u.views, expected: u.exp}
	return u
}

// commit is the run's commit: views, sync, record.
func (u *unit) commit(files []*state.File, c *state.Collection) error {
	u.exp.forget(files)
	if err := u.views.Apply(files, c); err != nil {
		return err
	}
	return u.record(files, c)
}

func (u *unit) record(files []*state.File, c *state.Collection) error {
	u.mu.Lock()
	u.commits++
	u.mu.Unlock()
	if err := u.disk.Sync(); err != nil {
		return err
	}
	return u.st.Commit(files, c)
}

// kinds are the events of kind k told so far.
func (u *unit) kinds(k Kind) []Event {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Event
	for _, e := range u.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// album records album id, named name, in a folder of that name, and
// gives the library its key.
func (u *unit) album(id int64, name string) (*catalog.Album, *state.Collection) {
	u.t.Helper()
	a := &catalog.Album{ID: id, Name: name, Type: "album", OwnerID: 1, UpdationTime: 1, Key: randomKey(u.t)}
	c := &state.Collection{ID: id, Name: name, Folder: name, Type: "album", OwnerID: 1}
	require.NoError(u.t, u.commit(nil, c))
	require.NoError(u.t, u.albums.load())
	u.lib.addAlbum(a)
	return a, c
}

// file seals a file of album a as Ente would (title, content, updated at
// t) and keeps its bytes in the library; it returns the listing entry and
// the item it opens to.
func (u *unit) file(a *catalog.Album, id int64, title string, content []byte, t int64) (*apiclient.File, *catalog.Item) {
	u.t.Helper()
	raw, ct := seal(u.t, a, id, map[string]any{"title": title, "fileType": 0, "creationTime": 1_600_000_000_000_000 + id,
		"modificationTime": 1_600_000_000_000_000, "hash": hashOf(content)}, content, t)
	u.lib.addFile(raw, ct)
	it, err := catalog.OpenItem(raw, a)
	require.NoError(u.t, err)
	return raw, it
}

// read is the content of rel in the backup folder ("" when missing).
func (u *unit) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(u.dir, rel))
	if err != nil {
		return ""
	}
	return string(b)
}

// write puts content at rel in the backup folder.
func (u *unit) write(rel, content string) {
	u.t.Helper()
	p := filepath.Join(u.dir, rel)
	require.NoError(u.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(u.t, os.WriteFile(p, []byte(content), 0o644))
}

// saved records content as file id's saved copy in album c under name,
// on disk and in the state, and returns its record.
func (u *unit) saved(c *state.Collection, it *catalog.Item, name string, content []byte) *state.File {
	u.t.Helper()
	u.write(filepath.Join(c.Folder, name), string(content))
	rec := record(it, nil)
	placed(rec, it, it.Meta.Hash, false)
	rec.Entries[c.ID] = &state.Entry{Name: name, Parts: []string{name}, Meta: it.Meta, Updated: it.UpdationTime}
	require.NoError(u.t, u.views.WriteSidecar(rec, c, nil))
	require.NoError(u.t, u.commit([]*state.File{rec}, nil))
	u.names.inAlbum(c.ID, func(n *layout.Namer) { n.Take(name) })
	return rec
}

// fileRecord is file id's record in the state.
func (u *unit) fileRecord(id int64) *state.File {
	u.t.Helper()
	f, err := u.st.File(id)
	require.NoError(u.t, err)
	return f
}

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return k
}

// hashOf is Ente's content hash of b.
func hashOf(b []byte) string {
	h := blake2b.Sum512(b)
	return keys.EncodeB64(h[:])
}

// seal makes file id's listing entry in album a, as Ente seals it: its
// key under the album's, its metadata md and its content (ct) under its
// key.
func seal(t *testing.T, a *catalog.Album, id int64, md map[string]any, content []byte, updated int64) (*apiclient.File, []byte) {
	t.Helper()
	key := randomKey(t)
	box, nonce, err := keys.SecretboxSealFresh(rand.Reader, key, a.Key)
	require.NoError(t, err)
	hdr, err := secretstream.NewHeader(rand.Reader)
	require.NoError(t, err)
	ct, err := secretstream.Encrypt(key, hdr, content)
	require.NoError(t, err)
	mj, err := json.Marshal(md)
	require.NoError(t, err)
	mct, mhdr, err := secretstream.EncryptBlob(rand.Reader, key, mj)
	require.NoError(t, err)
	return &apiclient.File{ID: id, OwnerID: 1, CollectionID: a.ID, EncryptedKey: box, KeyDecryptionNonce: nonce,
		File:     apiclient.FileAttributes{DecryptionHeader: hdr},
		Metadata: apiclient.FileAttributes{EncryptedData: mct, DecryptionHeader: mhdr},
		Info:     &apiclient.FileInfo{FileSize: int64(len(ct))}, UpdationTime: updated}, ct
}

// memLib is a Library held in memory: its albums, each album's entries
// (listed pageSize at a time), and the encrypted bytes of each file.
type memLib struct {
	mu       sync.Mutex
	albums   map[int64]*catalog.Album
	entries  map[int64][]apiclient.File
	objects  map[int64][]byte
	pageSize int
	// alwaysMore has every page say there is more (a broken server).
	alwaysMore bool
	// fail, when set, answers a call ("diff 3", "entry 3/7", "download 7")
	// with an error instead.
	fail  map[string]error
	calls []string
}

func newMemLib() *memLib {
	return &memLib{albums: map[int64]*catalog.Album{}, entries: map[int64][]apiclient.File{}, objects: map[int64][]byte{},
		pageSize: 100, fail: map[string]error{}}
}

func (l *memLib) addAlbum(a *catalog.Album) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.albums[a.ID] = a
}

// addFile lists raw in its album and keeps its content's ciphertext ct.
func (l *memLib) addFile(raw *apiclient.File, ct []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries[raw.CollectionID] = append(l.entries[raw.CollectionID], *raw)
	l.objects[raw.ID] = ct
}

func (l *memLib) call(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, name)
	return l.fail[name]
}

func (l *memLib) Collections(context.Context, int64) ([]apiclient.Collection, error) {
	if err := l.call("albums"); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []apiclient.Collection
	for _, a := range l.albums {
		out = append(out, apiclient.Collection{ID: a.ID, UpdationTime: a.UpdationTime, IsDeleted: a.Deleted, Type: a.Type})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (l *memLib) OpenAlbum(c *apiclient.Collection) (*catalog.Album, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := *l.albums[c.ID]
	return &a, nil
}

func (l *memLib) Diff(_ context.Context, cid, since int64) (*apiclient.DiffPage, error) {
	if err := l.call(fmt.Sprintf("diff %d", cid)); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var after []apiclient.File
	for _, e := range l.entries[cid] {
		if e.UpdationTime > since {
			after = append(after, e)
		}
	}
	sort.SliceStable(after, func(i, j int) bool { return after[i].UpdationTime < after[j].UpdationTime })
	page := &apiclient.DiffPage{Diff: after, HasMore: l.alwaysMore}
	if len(after) > l.pageSize {
		page.Diff, page.HasMore = after[:l.pageSize], true
	}
	return page, nil
}

func (l *memLib) CollectionFile(_ context.Context, cid, fid int64) (*apiclient.File, error) {
	if err := l.call(fmt.Sprintf("entry %d/%d", cid, fid)); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.entries[cid]) - 1; i >= 0; i-- {
		if e := l.entries[cid][i]; e.ID == fid && !e.IsDeleted {
			return &e, nil
		}
	}
	return nil, &errs.ApiError{Status: 404}
}

func (l *memLib) Answers(context.Context, string) bool { return true }

func (l *memLib) DownloadFile(_ context.Context, id int64) (*apiclient.Object, error) {
	if err := l.call(fmt.Sprintf("download %d", id)); err != nil {
		return nil, err
	}
	l.mu.Lock()
	b, ok := l.objects[id]
	l.mu.Unlock()
	if !ok {
		return nil, &errs.ApiError{Status: 404}
	}
	return &apiclient.Object{Body: io.NopCloser(bytes.NewReader(b)), Length: int64(len(b)), Status: 200, ETag: "e"}, nil
}

func (l *memLib) DownloadFileFrom(ctx context.Context, id, offset int64) (*apiclient.Object, error) {
	return nil, fmt.Errorf("file %d from %d: %w", id, offset, errs.ErrCorrupted)
}

func (l *memLib) DownloadFileRange(ctx context.Context, id, from, to int64) (*apiclient.Object, error) {
	return nil, fmt.Errorf("file %d range: %w", id, errs.ErrCorrupted)
}

func (l *memLib) DownloadObjectRange(context.Context, string, int64, int64) (*apiclient.Object, error) {
	return nil, errs.ErrCorrupted
}

// noRetry is a retry policy that tries once and never sleeps.
func noRetry() retry.Policy {
	p := retry.Default()
	p.MaxAttempts = 1
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return p
}

// fetcherFor downloads from l, one attempt a file.
func fetcherFor(l *memLib) *download.Fetcher {
	return &download.Fetcher{Client: l, Policy: noRetry(), TempFile: openTemp}
}

// adopter, untrasher and updater are the bench's collaborators.
func (u *unit) adopter() *adopter {
	return &adopter{root: u.dir, albums: u.albums, names: u.names, parts: u.parts, disk: u.disk, views: u.views, tally: u.tally,
		local: &localFiles{root: u.dir, st: u.st, claimed: u.albums.claimed}}
}

func (u *unit) untrasher() *untrasher {
	return &untrasher{root: u.dir, albums: u.albums, parts: u.parts, disk: u.disk, views: u.views, tally: u.tally}
}

func (u *unit) updater() *updater {
	return &updater{albums: u.albums, names: u.names, parts: u.parts, disk: u.disk, views: u.views, tally: u.tally, untrash: u.untrasher()}
}

// folderFailure is a failure of file id.
func folderFailure(id int64) folder.Failure { return folder.Failure{FileID: id} }

// mustItem seals file id of album 1, titled title, holding "x".
func mustItem(u *unit, id int64, title string) *catalog.Item {
	_, it := u.file(u.lib.albums[1], id, title, []byte("x"), 10)
	return it
}

// sameFile reports whether a and b are one file (hard links to it).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
