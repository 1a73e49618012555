package configdir_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download/configdir"
)

func TestSessionFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "quak", "session.json")
	none, err := configdir.LoadSessions(path)
	require.NoError(t, err)
	assert.Empty(t, none.List)

	a := &account.Account{Endpoint: "http://x", UserID: 7, Email: "a@b", Token: "tok",
		MasterKey: bytes.Repeat([]byte{1}, 32), SecretKey: bytes.Repeat([]byte{2}, 32), PublicKey: bytes.Repeat([]byte{3}, 32)}
	b := func(n byte) apiclient.B64 { return bytes.Repeat([]byte{n}, 24) }
	a.KeyAttributes = apiclient.KeyAttributes{KEKSalt: b(4), EncryptedKey: b(5), KeyDecryptionNonce: b(6), PublicKey: b(7),
		EncryptedSecretKey: b(8), SecretKeyDecryptionNonce: b(9), MemLimit: 1 << 20, OpsLimit: 3}
	require.NoError(t, (&configdir.Sessions{List: []account.Account{*a}}).Save(path))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())

	got, err := configdir.LoadSessions(path)
	require.NoError(t, err)
	require.Len(t, got.List, 1)
	assert.Equal(t, *a, got.List[0])

	require.NoError(t, os.Chmod(path, 0o644))
	_, err = configdir.LoadSessions(path)
	var ie *configdir.InsecureFileError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "readable by others (mode 0644)")

	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, (&configdir.Sessions{}).Save(path))
	require.NoError(t, (&configdir.Sessions{}).Save(path))
	none, err = configdir.LoadSessions(path)
	require.NoError(t, err)
	assert.Empty(t, none.List)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Empty(t, entries, "no temp files left behind")
}
