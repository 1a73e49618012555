package apiclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// An error page that echoes the request headers, the token across the
// 200-byte cut of the excerpt quak keeps: none of the token (no prefix of
// it longer than 4 characters) reaches the error, wherever the cut falls.
func TestAnErrorExcerptCutInsideTheTokenKeepsNoneOfIt(t *testing.T) {
	s := newServer(t, enteapitest.Config{})
	c, u := login(t, s)
	f := u.AddAlbum("a").AddFile(enteapitest.FileSpec{Title: "p.jpg", Data: []byte("x")})
	tok := u.Token()
	require.Greater(t, len(tok), 8)
	c = c.WithToken(tok)
	const prefix = "request blocked; headers: X-Auth-Token: "
	route := fmt.Sprintf("GET /files/download/%d", f.ID)
	for _, before := range []int{1, 4, len(tok) / 2, len(tok) - 5, len(tok) - 1} {
		// The cut falls `before` bytes before the token's end.
		pad := strings.Repeat("x", 200-len(prefix)-len(tok)+before)
		s.Inject(route, enteapitest.StatusBody(502, `{"error":"`+pad+prefix+tok+` and more"}`))
		_, err := c.DownloadFile(context.Background(), f.ID)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), tok[:5], "cut %d bytes before the token's end", before)
	}
	// A page that itself echoes only part of the token, the cut inside
	// that part: the part before the cut is not kept either.
	pad := strings.Repeat("x", 200-len(prefix)-10)
	s.Inject(route, enteapitest.StatusBody(502, pad+prefix+tok[:len(tok)-2]+"... (truncated)"))
	_, err := c.DownloadFile(context.Background(), f.ID)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tok[:5])
	assert.Contains(t, err.Error(), "X-Auth-Token: ", "the rest of the excerpt is kept")
}
