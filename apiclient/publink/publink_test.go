package publink_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/publink"
)

// PL.1's vectors, checked on museum and against npm's bs58.
const (
	vectorKeyB64    = "KfnBhyoARUZqo8e181FhLhQ+YjMdn7TDpKLUNc2Zq1k="
	vectorKeyBase58 = "3prbrwfCAoNqDSyZrb5sBoQ52bhApKPfxSbptLVaEAYx"
)

func vectorKey(t *testing.T) []byte {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(vectorKeyB64)
	require.NoError(t, err)
	return k
}

func TestBase58Vectors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"hello world", []byte("hello world"), "StV1DL6CwTryKyV"},
		{"link key", vectorKey(t), vectorKeyBase58},
		{"empty", nil, ""},
		{"one zero", []byte{0}, "1"},
		{"three zeros", []byte{0, 0, 0}, "111"},
		{"zeros then data", []byte{0, 0, 1}, "112"},
		{"57", []byte{57}, "z"},
		{"58", []byte{58}, "21"},
		{"255", []byte{255}, "5Q"},
		{"256", []byte{1, 0}, "5R"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, publink.EncodeBase58(c.in))
			got, err := publink.DecodeBase58(c.want)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(c.in, got), "decoded %x, want %x", got, c.in)
		})
	}
}

// A key that starts with zero bytes keeps them: each is a leading '1', and
// a key of 32 bytes decodes to 32 bytes, not fewer.
func TestBase58KeepsLeadingZeroBytesOfAKey(t *testing.T) {
	for zeros := 0; zeros <= publink.KeySize; zeros++ {
		key := bytes.Repeat([]byte{0}, zeros)
		for i := zeros; i < publink.KeySize; i++ {
			key = append(key, byte(i*37+1))
		}
		s := publink.EncodeBase58(key)
		assert.Equal(t, strings.Repeat("1", zeros), s[:zeros], "zeros=%d", zeros)
		assert.Less(t, len(s), 50, "zeros=%d: base58 of a key is under 50 characters", zeros)
		got, err := publink.DecodeBase58(s)
		require.NoError(t, err)
		assert.Equal(t, key, got, "zeros=%d", zeros)
	}
}

func TestBase58RoundTripsEveryLength(t *testing.T) {
	for n := 0; n <= 70; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(255 - i*7)
		}
		got, err := publink.DecodeBase58(publink.EncodeBase58(b))
		require.NoError(t, err)
		assert.Equal(t, b, got, "len=%d", n)
	}
}

func TestBase58RefusesCharactersOutsideTheAlphabet(t *testing.T) {
	for _, s := range []string{"0", "O", "I", "l", "+", "/", "=", "é", "3prb rwf", "abc\x00"} {
		_, err := publink.DecodeBase58(s)
		assert.ErrorIs(t, err, publink.ErrBase58, "%q", s)
	}
	_, err := publink.DecodeBase58("22O2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "character 3")
	assert.NotContains(t, err.Error(), "O", "the error names the position, not the character")
}

func TestBase58RefusesOverlongText(t *testing.T) {
	_, err := publink.DecodeBase58(strings.Repeat("2", 256))
	require.NoError(t, err)
	_, err = publink.DecodeBase58(strings.Repeat("2", 257))
	assert.ErrorIs(t, err, publink.ErrBase58)
}

func TestParseReadsTokenKeyAndHost(t *testing.T) {
	key := vectorKey(t)
	hexKey := hex.EncodeToString(key)
	cases := []struct {
		name, raw, host string
	}{
		{"ente", "https://albums.ente.com/?t=ABCDEF2345#" + vectorKeyBase58, "albums.ente.com"},
		{"older host", "https://albums.ente.io/?t=ABCDEF2345#" + vectorKeyBase58, "albums.ente.io"},
		{"token in the path", "https://albums.ente.com/ABCDEF2345#" + vectorKeyBase58, "albums.ente.com"},
		{"token in a later segment's place", "https://albums.ente.com//ABCDEF2345/#" + vectorKeyBase58, "albums.ente.com"},
		{"legacy hex key", "https://albums.ente.com/?t=ABCDEF2345#" + hexKey, "albums.ente.com"},
		{"upper-case hex", "https://albums.ente.com/?t=ABCDEF2345#" + strings.ToUpper(hexKey), "albums.ente.com"},
		{"no scheme", "albums.ente.com/?t=ABCDEF2345#" + vectorKeyBase58, "albums.ente.com"},
		{"spaces around", "  https://albums.ente.com/?t=ABCDEF2345#" + vectorKeyBase58 + "\n", "albums.ente.com"},
		{"self-hosted with port", "http://photos.example.org:3002/?t=ABCDEF2345#" + vectorKeyBase58, "photos.example.org"},
		{"upper-case host", "https://Albums.Ente.COM/?t=ABCDEF2345#" + vectorKeyBase58, "albums.ente.com"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := publink.Parse(c.raw)
			require.NoError(t, err)
			assert.Equal(t, "ABCDEF2345", l.AccessToken)
			assert.Equal(t, key, l.Key)
			assert.Equal(t, c.host, l.Host)
		})
	}
}

func TestParseTakesTokensUpTo64Characters(t *testing.T) {
	tok := strings.Repeat("A", 64)
	l, err := publink.Parse("https://albums.ente.com/?t=" + tok + "#" + vectorKeyBase58)
	require.NoError(t, err)
	assert.Equal(t, tok, l.AccessToken)
}

// The query's t wins over the path, as in Ente's albums app.
func TestParsePrefersTheQueryToken(t *testing.T) {
	l, err := publink.Parse("https://albums.ente.com/PATHTOKEN?t=QUERYTOKEN#" + vectorKeyBase58)
	require.NoError(t, err)
	assert.Equal(t, "QUERYTOKEN", l.AccessToken)
}

func TestParseRefusesBrokenLinks(t *testing.T) {
	key := vectorKey(t)
	hexKey := hex.EncodeToString(key)
	zeroKey := publink.EncodeBase58(make([]byte, 32))
	cases := []struct {
		name, raw string
		want      error
	}{
		{"no fragment", "https://albums.ente.com/?t=ABCDEF2345", publink.ErrNoKey},
		{"empty fragment", "https://albums.ente.com/?t=ABCDEF2345#", publink.ErrNoKey},
		{"base58 one char short", "https://albums.ente.com/?t=ABCDEF2345#" + vectorKeyBase58[:43], publink.ErrBadKey},
		{"base58 one char long", "https://albums.ente.com/?t=ABCDEF2345#" + vectorKeyBase58 + "2", publink.ErrBadKey},
		{"a leading zero byte lost", "https://albums.ente.com/?t=ABCDEF2345#" + zeroKey[1:], publink.ErrBadKey},
		{"base58 with a 0", "https://albums.ente.com/?t=ABCDEF2345#0" + vectorKeyBase58[1:], publink.ErrBadKey},
		{"base64 key", "https://albums.ente.com/?t=ABCDEF2345#" + vectorKeyB64, publink.ErrBadKey},
		{"hex one byte short", "https://albums.ente.com/?t=ABCDEF2345#" + hexKey[:62], publink.ErrBadKey},
		{"hex one byte long", "https://albums.ente.com/?t=ABCDEF2345#" + hexKey + "00", publink.ErrBadKey},
		{"hex odd", "https://albums.ente.com/?t=ABCDEF2345#" + hexKey[:63], publink.ErrBadKey},
		{"hex not hex", "https://albums.ente.com/?t=ABCDEF2345#" + hexKey[:62] + "zz", publink.ErrBadKey},
		{"no token", "https://albums.ente.com/#" + vectorKeyBase58, publink.ErrNoToken},
		{"empty t", "https://albums.ente.com/?t=#" + vectorKeyBase58, publink.ErrNoToken},
		{"token with punctuation", "https://albums.ente.com/?t=AB%27CD#" + vectorKeyBase58, publink.ErrNoToken},
		{"token too long", "https://albums.ente.com/?t=" + strings.Repeat("A", 65) + "#" + vectorKeyBase58, publink.ErrNoToken},
		{"not http", "ftp://albums.ente.com/?t=ABCDEF2345#" + vectorKeyBase58, publink.ErrNotALink},
		{"bad escape", "https://albums.ente.com/%zz?t=ABCDEF2345#" + vectorKeyBase58, publink.ErrNotALink},
		{"no host", "https:///?t=ABCDEF2345#" + vectorKeyBase58, publink.ErrNotALink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := publink.Parse(c.raw)
			assert.ErrorIs(t, err, c.want)
		})
	}
}

// No error of Parse or Endpoint, nor a Link printed, holds the token, the
// key (in any of its encodings) or a piece of either.
func TestParseErrorsAndPrintedLinksHoldNoSecret(t *testing.T) {
	key := vectorKey(t)
	const tok = "SECRETTOK7"
	secrets := []string{tok, vectorKeyBase58[:8], hex.EncodeToString(key)[:8], vectorKeyB64[:8]}
	raws := []string{
		"https://albums.ente.com/?t=" + tok,
		"https://albums.ente.com/?t=" + tok + "#" + vectorKeyBase58[:40],
		"https://albums.ente.com/?t=" + tok + "#" + vectorKeyBase58 + "0",
		"https://albums.ente.com/?t=" + tok + "#" + hex.EncodeToString(key)[:62] + "zz",
		"https://albums.ente.com/%zz?t=" + tok + "#" + vectorKeyBase58,
		"https://albums.ente.com/?t=" + tok + "%27#" + vectorKeyBase58,
		"ftp://x/?t=" + tok + "#" + vectorKeyBase58,
		"https://self.example/?t=" + tok + "#" + vectorKeyBase58,
	}
	var texts []string
	for _, raw := range raws {
		l, err := publink.Parse(raw)
		if err != nil {
			texts = append(texts, err.Error())
			continue
		}
		texts = append(texts, l.String(), fmt.Sprintf("%v %+v %#v %s", l, l, l, *l))
		if _, err := l.Endpoint(); err != nil {
			texts = append(texts, err.Error())
		}
	}
	require.Len(t, texts, len(raws)-1+3, "seven errors; one link that parses, prints twice and has no endpoint")
	for _, text := range texts {
		for _, s := range secrets {
			assert.NotContains(t, text, s)
		}
	}
}

func TestEndpointKnowsEntesHostsOnly(t *testing.T) {
	for _, host := range []string{"albums.ente.com", "albums.ente.io", "ALBUMS.ENTE.COM"} {
		l, err := publink.Parse("https://" + host + "/?t=ABCDEF2345#" + vectorKeyBase58)
		require.NoError(t, err)
		api, err := l.Endpoint()
		require.NoError(t, err, host)
		assert.Equal(t, "https://api.ente.com", api)
	}
	for _, host := range []string{"photos.example.org", "albums.ente.com.evil.example", "ente.com", "api.ente.com", "my.ente.com"} {
		l, err := publink.Parse("https://" + host + "/?t=ABCDEF2345#" + vectorKeyBase58)
		require.NoError(t, err)
		_, err = l.Endpoint()
		assert.ErrorIs(t, err, publink.ErrSelfHosted, host)
		assert.Contains(t, err.Error(), "--endpoint")
	}
}

func TestEncodeKeyIsWhatParseReads(t *testing.T) {
	key := vectorKey(t)
	assert.Equal(t, vectorKeyBase58, publink.EncodeKey(key))
	l, err := publink.Parse("https://albums.ente.com/?t=ABCDEF2345#" + publink.EncodeKey(key))
	require.NoError(t, err)
	assert.Equal(t, key, l.Key)
}
