package cmd

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
	"github.com/quak-photos/quak/download/folder"
)

// linkSetup is a fake server with an album "Grandma" of two files, and an
// empty backup folder.
func linkSetup(t *testing.T) (*env, *enteapitest.Server, *enteapitest.Album, string) {
	t.Helper()
	s, u := fakeServer(t, enteapitest.UserOptions{})
	a := u.AddAlbum("Grandma")
	a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 100, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 100, Seed: 2})
	dir := filepath.Join(t.TempDir(), "backup")
	require.NoError(t, os.Mkdir(dir, 0o755))
	return newEnv(t), s, a, dir
}

// linkFile writes a link into a private file and returns its path.
func linkFile(t *testing.T, l *enteapitest.Link) string {
	t.Helper()
	return passwordFile(t, l.URL(), 0o600)
}

// secretsOf are the link's secrets as they could leak: the token, the key
// as the link spells it and in base64, and what the folder keeps.
func secretsOf(t *testing.T, l *enteapitest.Link, dir string) []string {
	t.Helper()
	out := []string{l.Token(), l.URL()[strings.Index(l.URL(), "#")+1:]}
	f := folder.At(dir)
	b, err := os.ReadFile(f.LinkPath())
	require.NoError(t, err)
	sec, err := f.ParseLink(b)
	require.NoError(t, err)
	for _, s := range []string{sec.JWT, sec.DeviceToken, publink.EncodeKey(sec.Key)} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// noSecrets fails when any of secrets is in text.
func noSecrets(t *testing.T, where, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds a secret of the link", where)
		}
	}
}

func TestBackupLinkSavesTheAlbumAndRunsAgainFromTheFolder(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	code, out, errOut := e.run("backup", "--json", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	assert.FileExists(t, filepath.Join(dir, "Grandma", "a.jpg"))
	fi, err := os.Stat(folder.At(dir).LinkPath())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	f := a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 100, Seed: 3})
	code, out2, errOut2 := e.run("backup", "--json", dir) // from cron: the folder knows its link
	require.Equal(t, exitOK, code, errOut2)
	b, err := os.ReadFile(filepath.Join(dir, "Grandma", "c.jpg"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(f.Plaintext(), b))
	assert.Contains(t, out2, `"new":1`)
	assert.Equal(t, 1, l.Devices(), "one device, kept by its token")

	secrets := secretsOf(t, l, dir)
	noSecrets(t, "the output", out+errOut+out2+errOut2, secrets)
	entries, err := os.ReadDir(filepath.Join(dir, folder.StateDir))
	require.NoError(t, err)
	for _, en := range entries {
		if en.IsDir() || en.Name() == "link.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, folder.StateDir, en.Name()))
		require.NoError(t, err)
		noSecrets(t, en.Name(), string(b), secrets)
	}
}

func TestBackupLinkRefusesALooseLinkFile(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, os.Chmod(folder.At(dir).LinkPath(), 0o644))
	code, _, errOut = e.run("backup", dir)
	assert.Equal(t, exitFatal, code)
	assert.Contains(t, errOut, "readable by others")
	assert.Contains(t, errOut, "chmod 600")

	code, _, errOut = e.run("backup", "--link-file", passwordFile(t, l.URL(), 0o644), "--endpoint", s.URL(), t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "readable by others")
}

func TestBackupLinkWithDownloadsOffSavesNothing(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{NoDownload: true})
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)
	assert.Equal(t, exitNoDownload, code)
	assert.Equal(t, 7, code)
	assert.Contains(t, errOut, `the owner of the album "Grandma" turned downloads off`)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing saved, not even the folder's own area")
	assert.Zero(t, s.RequestsWithPrefix("GET /public-collection/files/download/"))
	assert.Zero(t, s.RequestsWithPrefix("GET /public-collection/diff"))
}

func TestBackupLinkFromStdinAndFlagsThatClash(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	e.stdin = l.URL() + "\n"
	code, _, errOut := e.run("backup", "--link-file", "-", "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	assert.FileExists(t, filepath.Join(dir, "Grandma", "b.jpg"))

	code, _, errOut = e.run("backup", "--link", l.URL(), "--link-file", "x", dir)
	assert.Equal(t, exitUsage, code, errOut)
	code, _, errOut = e.run("backup", "--endpoint", s.URL(), dir)
	assert.Equal(t, exitUsage, code, errOut)
}

func TestBackupLinkOfASelfHostedServerNeedsEndpoint(t *testing.T) {
	e, _, a, dir := linkSetup(t)
	u := strings.Replace(a.ShareLink(enteapitest.LinkOptions{}).URL(), "albums.ente.com", "photos.example.org", 1)
	code, _, errOut := e.run("backup", "--link-file", passwordFile(t, u, 0o600), dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "photos.example.org")
	assert.Contains(t, errOut, "--endpoint")
}

// inFlight counts the object downloads in flight through it, holding the
// first ones until hold of them are in flight at once, so that a run that
// would have more in flight shows it.
type inFlight struct {
	base      http.RoundTripper
	mu        sync.Mutex
	now, most int
	hold      int
	release   chan struct{}
	released  bool
}

func (f *inFlight) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.Contains(r.URL.Path, "/store/") {
		return f.base.RoundTrip(r)
	}
	f.mu.Lock()
	f.now++
	f.most = max(f.most, f.now)
	if f.now == f.hold && !f.released {
		f.released = true
		close(f.release)
	}
	f.mu.Unlock()
	select {
	case <-f.release:
	case <-r.Context().Done():
	}
	defer func() {
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
	}()
	return f.base.RoundTrip(r)
}

func TestBackupLinkDownloadsAtMostFourAtOnce(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	for i := 0; i < 10; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("n%d.jpg", i), Size: 100, Seed: byte(10 + i)})
	}
	fl := &inFlight{base: http.DefaultTransport, hold: linkMaxConcurrency, release: make(chan struct{})}
	e.transport = fl
	code, _, errOut := e.run("backup", "--link-file", linkFile(t, a.ShareLink(enteapitest.LinkOptions{})), "--endpoint", s.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 4, fl.most)
	assert.Equal(t, 4, linkMaxConcurrency)
}

func TestBackupLinkConcurrencyTheUserAsksFor(t *testing.T) {
	o := &backupOpts{concurrency: 8}
	bo := backupOptions(deps{}, o, "dir", &runSource{who: &account.Account{}, maxConcurrency: linkMaxConcurrency}, &printer{})
	assert.Equal(t, 8, bo.Concurrency)
	bo = backupOptions(deps{}, &backupOpts{}, "dir", &runSource{who: &account.Account{}, maxConcurrency: linkMaxConcurrency}, &printer{})
	assert.Equal(t, 4, bo.MaxConcurrency)
	assert.Zero(t, bo.Concurrency)
}
