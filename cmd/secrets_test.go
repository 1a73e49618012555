package cmd

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// secretForms are the ways a secret could leak: as is, and for key bytes,
// in base64 (both alphabets) and hex.
func secretForms(token, password string, keyBytes ...[]byte) []string {
	forms := []string{token, password}
	for _, k := range keyBytes {
		forms = append(forms, string(k), base64.StdEncoding.EncodeToString(k), base64.URLEncoding.EncodeToString(k),
			base64.RawStdEncoding.EncodeToString(k), hex.EncodeToString(k))
	}
	return forms
}

// filesUnder returns every regular file under root but skip, with its bytes.
func filesUnder(t *testing.T, root, skip string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && p != skip {
			if b, err := os.ReadFile(p); err == nil {
				out[p] = b
			}
		}
		return nil
	})
	return out
}

// The token, the password and the keys never appear in any output, log
// line, error, JSON event, file quak writes, or request to the object
// store; logout leaves no secret on disk.
func TestSecretsStaySecret(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100})
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	a.AddFile(enteapitest.FileSpec{Title: "thumb.jpg", Data: realJPEG(t, 100, 80), LostThumbnail: true, Thumbnail: make([]byte, 40<<10)})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.FlipAt(20))
	s.Inject(fmt.Sprintf("GET /files/download/%d", bad.ID), enteapitest.Status(503))
	var log pingLog
	ping := log.server(t)
	logFile := filepath.Join(t.TempDir(), "quak.log")
	var all strings.Builder
	for _, args := range [][]string{
		{"backup", "--json", "--log-file", logFile, "--healthcheck-url", ping.URL, dir},
		{"backup", "--dry-run", "--json", dir},
		{"status", "--json", dir},
		{"status", dir},
		{"verify", "--json", dir},
		{"whoami"},
		{"helper", "fix-missing-thumbnails", "--json"},
		{"backup", "--log-file", logFile, filepath.Join(dir, "missing")},
	} {
		_, out, errOut := e.run(args...)
		all.WriteString(out + errOut)
	}
	tok := sessionToken(t, e)
	forms := secretForms(tok, u.Password, u.MasterKey, u.SecretKey)
	session := e.sessionFile()
	written := filesUnder(t, dir, "")
	for p, b := range filesUnder(t, filepath.Dir(session), session) {
		written[p] = b
	}
	written[logFile], _ = os.ReadFile(logFile)
	for _, b := range log.bodies {
		written["health ping"] = append(written["health ping"], b...)
	}
	for _, secret := range forms {
		if strings.Contains(all.String(), secret) {
			t.Fatalf("a command printed a secret")
		}
		for p, b := range written {
			if bytes.Contains(b, []byte(secret)) {
				t.Fatalf("%s holds a secret", p)
			}
		}
	}
	if s.Leaks() != 0 || log.leaks != 0 {
		t.Fatal("the token reached the object store or a health check")
	}

	if code, _, _ := e.run("logout"); code != 0 {
		t.Fatal("logout failed")
	}
	if _, err := os.Stat(session); !os.IsNotExist(err) {
		t.Fatal("logout left the session file")
	}
	for p, b := range filesUnder(t, filepath.Dir(filepath.Dir(session)), "") {
		for _, secret := range forms {
			if bytes.Contains(b, []byte(secret)) {
				t.Fatalf("after logout, %s holds a secret", p)
			}
		}
	}
}
