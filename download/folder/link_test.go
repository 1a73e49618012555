package folder

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinkFileIsPrivateAndRoundTrips(t *testing.T) {
	f := At(t.TempDir())
	require.NoError(t, os.MkdirAll(f.Temp(), 0o700))
	assert.False(t, f.HasLink())
	s := LinkSecrets{Host: "albums.ente.com", Endpoint: "https://api.ente.com", Album: 7, AccessToken: "TOKEN12345",
		Key: make([]byte, 32), JWT: "jwt.secret.here", DeviceToken: "device.secret"}
	require.NoError(t, f.WriteLink(s))
	assert.True(t, f.HasLink())
	fi, err := os.Stat(f.LinkPath())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(f.LinkPath())
	require.NoError(t, err)
	got, err := f.ParseLink(b)
	require.NoError(t, err)
	assert.Equal(t, s, *got)
}

func TestLinkSecretsPrintWithoutSecrets(t *testing.T) {
	s := LinkSecrets{Host: "albums.ente.com", Album: 7, AccessToken: "TOKEN12345", Key: []byte("k"), JWT: "JWTJWT", DeviceToken: "DEVDEV"}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v", s, s, s), fmt.Sprint(&s)} {
		for _, secret := range []string{"TOKEN12345", "JWTJWT", "DEVDEV"} {
			assert.NotContains(t, out, secret)
		}
	}
}

func TestParseLinkRefusesWhatItCannotUse(t *testing.T) {
	f := At(t.TempDir())
	for _, b := range []string{`not json TOKEN12345`, `{"version":2,"accessToken":"TOKEN12345"}`,
		`{"version":1,"accessToken":"TOKEN12345","endpoint":"x","key":"AAAA"}`} {
		_, err := f.ParseLink([]byte(b))
		require.ErrorIs(t, err, ErrBadLinkFile)
		assert.NotContains(t, err.Error(), "TOKEN12345")
	}
}
