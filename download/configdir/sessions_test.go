package configdir_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/configdir"
	"github.com/quak-photos/quak/errs"
)

func testAccount(email, endpoint string, id int64) *account.Account {
	return &account.Account{Endpoint: endpoint, UserID: id, Email: email, Token: "tok-" + email,
		MasterKey: bytes.Repeat([]byte{1}, 32), SecretKey: bytes.Repeat([]byte{2}, 32), PublicKey: bytes.Repeat([]byte{3}, 32)}
}

func fileVersionOf(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v struct{ Version int }
	require.NoError(t, json.Unmarshal(b, &v))
	return v.Version
}

func TestSessionsGrowFromTheSingleSessionFileAndShrinkBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quak", "session.json")
	s, err := configdir.LoadSessions(path)
	require.NoError(t, err)
	assert.Empty(t, s.List, "no file is no session")

	// A session file written before several accounts existed.
	alice := testAccount("alice@example.org", "http://ente.local", 1)
	require.NoError(t, (&configdir.Sessions{List: []account.Account{*alice}}).Save(path))
	s, err = configdir.LoadSessions(path)
	require.NoError(t, err)
	require.Len(t, s.List, 1)
	assert.Equal(t, alice.Token, s.List[0].Token)
	assert.Equal(t, alice.MasterKey, s.List[0].MasterKey)

	carol := testAccount("carol@example.org", "https://api.ente.io", 2)
	s.Put(carol)
	require.NoError(t, s.Save(path))
	assert.Equal(t, 2, fileVersionOf(t, path))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	s, err = configdir.LoadSessions(path)
	require.NoError(t, err)
	require.Len(t, s.List, 2)
	got, err := s.Find("CAROL@example.org", "")
	require.NoError(t, err)
	assert.Equal(t, carol.Token, got.Token)
	assert.Equal(t, carol.SecretKey, got.SecretKey)

	// Logging in again replaces the session, never adds a second.
	fresh := testAccount("Alice@example.org", "http://ente.local/", 1)
	fresh.Token = "tok-new"
	s.Put(fresh)
	require.Len(t, s.List, 2)
	got, err = s.Find("alice@example.org", "http://ente.local")
	require.NoError(t, err)
	assert.Equal(t, "tok-new", got.Token)

	// Back to one account: the file is the single-session format again,
	// which older quak reads.
	assert.True(t, s.Delete("carol@example.org", "https://api.ente.io/"))
	assert.False(t, s.Delete("carol@example.org", "https://api.ente.io"))
	require.NoError(t, s.Save(path))
	assert.Equal(t, 1, fileVersionOf(t, path))
	one, err := configdir.LoadSessions(path)
	require.NoError(t, err)
	require.Len(t, one.List, 1)
	assert.Equal(t, "tok-new", one.List[0].Token)

	assert.True(t, s.Delete("alice@example.org", "http://ente.local"))
	require.NoError(t, s.Save(path))
	_, err = os.Stat(path)
	assert.True(t, os.IsNotExist(err), "no session left, no file")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Empty(t, entries, "no temp files left behind")
}

func TestSessionsFindErrors(t *testing.T) {
	s := &configdir.Sessions{}
	s.Put(testAccount("a@x", "http://one", 1))
	s.Put(testAccount("a@x", "http://two", 1))
	s.Put(testAccount("b@x", "http://one", 2))
	_, err := s.Find("a@x", "")
	var ae *configdir.AmbiguousError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, []string{"http://one", "http://two"}, ae.Endpoints)
	got, err := s.Find("a@x", "http://two")
	require.NoError(t, err)
	assert.Equal(t, "http://two", got.Endpoint)
	_, err = s.Find("b@x", "http://two")
	assert.ErrorIs(t, err, errs.ErrNotLoggedIn)
	assert.Contains(t, err.Error(), "no session for b@x on http://two")
	_, err = s.Find("c@x", "")
	assert.ErrorIs(t, err, errs.ErrNotLoggedIn)
	assert.Contains(t, err.Error(), "no session for c@x)")
}

func TestSessionsFileRefusedWhenLooser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	s := &configdir.Sessions{}
	s.Put(testAccount("a@x", "http://one", 1))
	s.Put(testAccount("b@x", "http://one", 2))
	require.NoError(t, s.Save(path))
	for _, mode := range []os.FileMode{0o640, 0o604, 0o620} {
		require.NoError(t, os.Chmod(path, mode))
		_, err := configdir.LoadSessions(path)
		var ie *configdir.InsecureFileError
		require.ErrorAs(t, err, &ie, "mode %04o", mode)
	}
}

func TestSessionsFileDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	for name, body := range map[string]string{
		"not json":   "{",
		"version 9":  `{"version":9}`,
		"incomplete": `{"version":2,"sessions":[{"email":"a@x","token":""}]}`,
	} {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		_, err := configdir.LoadSessions(path)
		assert.Error(t, err, name)
	}
}

func TestFolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quak", "folders.json")
	f, err := configdir.LoadFolders(path)
	require.NoError(t, err)
	assert.Empty(t, f.List)
	assert.True(t, f.Set("/b/carol", "carol@x", "http://one"))
	assert.True(t, f.Set("/b/alice/", "alice@x", "http://one"))
	assert.False(t, f.Set("/b/alice", "ALICE@x", "http://one/"), "the same binding again changes nothing")
	assert.True(t, f.Set("/b/alice2", "alice@x", "http://one"))
	require.NoError(t, f.Save(path))

	f, err = configdir.LoadFolders(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"/b/alice", "/b/alice2", "/b/carol"}, dirsOf(f.List), "sorted by account, then folder")
	assert.Equal(t, []string{"/b/alice", "/b/alice2"}, dirsOf(f.Of("alice@x", "http://one")))
	assert.Empty(t, f.Of("alice@x", "http://two"))
	assert.True(t, f.Set("/b/alice2", "carol@x", "http://one"), "a folder moves to another account")
	assert.Equal(t, "carol@x", f.Get("/b/alice2").Email)
	assert.True(t, f.Forget("/b/alice2/"))
	assert.False(t, f.Forget("/b/alice2"))
	assert.Nil(t, f.Get("/b/alice2"))

	require.NoError(t, os.WriteFile(path, []byte(`{"version":3}`), 0o600))
	_, err = configdir.LoadFolders(path)
	assert.Error(t, err)
}

func dirsOf(l []configdir.Folder) []string {
	out := []string{}
	for _, f := range l {
		out = append(out, f.Dir)
	}
	return out
}
