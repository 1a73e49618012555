package restore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

// env is a fake server with a source account, backed up into dir, and an
// empty target account to restore into.
type env struct {
	t        *testing.T
	s        *enteapitest.Server
	src, dst *enteapitest.User
	dir      string
	mu       sync.Mutex
	events   []Event
	sleeps   []time.Duration
}

func newEnv(t *testing.T) *env {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{PageSize: 2})
	t.Cleanup(s.Close)
	e := &env{t: t, s: s, dir: filepath.Join(t.TempDir(), "backup")}
	e.src = s.AddUser("alice@example.org", "pw", enteapitest.UserOptions{})
	e.dst = s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	return e
}

func noSleep() retry.Policy {
	p := retry.Default()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	p.Rand = func() float64 { return 0 }
	return p
}

func keysOf(u *enteapitest.User) catalog.Keys {
	return catalog.Keys{UserID: u.ID, MasterKey: u.MasterKey, PublicKey: u.PublicKey, SecretKey: u.SecretKey}
}

// backup backs u's account up into dir, and records the run as quak
// backup does: a run without failures is a success.
func (e *env) backup(u *enteapitest.User, dir string) *backup.Summary {
	e.t.Helper()
	sum, err := backup.Run(context.Background(), backup.Options{Dir: dir,
		Source:   backup.Source{Client: e.s.Client(nil).WithToken(u.Token()), Email: u.Email, Keys: keysOf(u), Endpoint: e.s.URL()},
		Transfer: backup.Transfer{Policy: noSleep()},
		Scope:    backup.Scope{Init: true},
		Record: func(s *backup.Summary, err error) (*folder.RunRecord, bool) {
			ok := err == nil && s.Failed == 0
			outcome := folder.OutcomeOK
			if !ok {
				outcome = folder.OutcomePartial
			}
			return &folder.RunRecord{Started: true, Outcome: outcome, End: folder.Seconds(time.Now()),
				Email: u.Email, UserID: u.ID, Endpoint: e.s.URL()}, ok
		},
	})
	require.NoError(e.t, err)
	return sum
}

// noTools finds no program: videos get the placeholder.
var noTools = thumbnails.Tools{
	LookPath: func(string) (string, error) { return "", errors.New("not found") },
	Run:      func(context.Context, string, ...string) ([]byte, error) { return nil, errors.New("no") },
}

func (e *env) options() Options {
	p := noSleep()
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.sleeps = append(e.sleeps, d)
		return ctx.Err()
	}
	tools := noTools
	// One original at a time: the tests that count requests know their
	// order. Those of many at once (concurrency_test.go) set their own.
	return Options{Dir: e.dir, Policy: p, Tools: &tools, Concurrency: 1,
		Target: Target{Client: e.s.Client(nil).WithToken(e.dst.Token()), Keys: keysOf(e.dst), Email: e.dst.Email, Endpoint: e.s.URL()},
		Events: func(ev Event) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, ev)
		}}
}

func (e *env) restoreWith(o Options) (*Summary, error) {
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	return Run(context.Background(), o)
}

func (e *env) mustRestore() *Summary {
	e.t.Helper()
	sum, err := e.restoreWith(e.options())
	require.NoError(e.t, err)
	require.Empty(e.t, sum.Failures)
	return sum
}

// library gives the source account a little of everything: a photo in two
// albums and the favourites, a captioned and placed photo, a video, a
// live photo, a hidden photo and a renamed one.
func (e *env) library() {
	trip := e.src.AddAlbum("Trip")
	family := e.src.AddAlbum("Family")
	fav := e.src.AddCollection("Favorites", "favorites")
	hidden := e.src.AddAlbum(".hidden")
	hidden.SetVisibility(2)
	both := trip.AddFile(enteapitest.FileSpec{Title: "both.jpg", Data: enteapitest.FakeJPEG("both"), CreationTime: 1_600_000_000_000_000})
	family.Add(both)
	fav.Add(both)
	trip.AddFile(enteapitest.FileSpec{Title: "beach.jpg", Data: enteapitest.FakeJPEG("beach"), Caption: "the sea",
		Latitude: 43.5, Longitude: 7.25, OffsetTime: "+02:00", CreationTime: 1_500_000_000_000_000, ModificationTime: 1_500_000_100_000_000})
	trip.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Data: []byte("not really a video, but bytes")})
	trip.AddFile(enteapitest.FileSpec{Title: "IMG_1.HEIC", FileType: 2,
		Data: enteapitest.LivePhoto("HEIC", []byte("heic bytes"), "MOV", []byte("mov bytes"))})
	family.AddFile(enteapitest.FileSpec{Title: "old.jpg", EditedName: "renamed.jpg", EditedTime: 1_400_000_000_000_000,
		Data: enteapitest.FakeJPEG("renamed")})
	hidden.AddFile(enteapitest.FileSpec{Title: "secret.jpg", Data: enteapitest.FakeJPEG("secret")})
}

// copyOf is what a backup says of one original: its metadata, local hash
// and the albums (name/type/visibility) that hold it.
type copyOf struct {
	Meta   catalog.Meta
	Hash   string
	Albums string
}

// backedUp reads a backup's originals by content.
func (e *env) backedUp(dir string) map[string]copyOf {
	e.t.Helper()
	st, err := folder.At(dir).OpenStateReadOnly()
	require.NoError(e.t, err)
	defer func() { _ = st.Close() }()
	cols, err := st.Collections()
	require.NoError(e.t, err)
	out := map[string]copyOf{}
	require.NoError(e.t, st.Files(func(f *state.File) error {
		var albums []string
		for cid, en := range f.Entries {
			if !en.Deleted {
				c := cols[cid]
				albums = append(albums, c.Name+"/"+c.Type+"/"+string(rune('0'+c.Visibility)))
			}
		}
		sort.Strings(albums)
		_, dup := out[f.LocalHash]
		assert.False(e.t, dup, "two files of the same content: %s", f.Meta.Title)
		out[f.LocalHash] = copyOf{Meta: f.Meta, Hash: f.LocalHash, Albums: strings.Join(albums, ",")}
		return nil
	}))
	return out
}

// sameAsSource backs the target up into a fresh folder and compares it
// with the source's backup: every original once, the same bytes (hashes
// the backup checked), metadata and albums.
func (e *env) sameAsSource() {
	e.t.Helper()
	again := filepath.Join(e.t.TempDir(), "again")
	e.backup(e.dst, again)
	want, got := e.backedUp(e.dir), e.backedUp(again)
	require.Len(e.t, got, len(want), "one file per original")
	for h, w := range want {
		g, ok := got[h]
		if !assert.True(e.t, ok, "%s is missing from the target", w.Meta.Title) {
			continue
		}
		assert.Equal(e.t, w, g, w.Meta.Title)
	}
}

// fileBytes reads every original under dir outside .quak, by name.
func fileBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == folder.StateDir {
			return filepath.SkipDir
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".json") && !strings.HasSuffix(p, ".xmp") {
			b, err := os.ReadFile(p)
			out[filepath.Base(p)] = b
			return err
		}
		return nil
	}))
	return out
}

func sameBytes(t *testing.T, a, b []byte, what string) {
	t.Helper()
	if !bytes.Equal(a, b) {
		t.Errorf("%s: content differs (%d bytes, want %d)", what, len(b), len(a))
	}
}
