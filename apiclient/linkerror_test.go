package apiclient_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
)

// No error of a link client holds the access token, the password's JWT,
// the device token or the key: not from museum's answers, not from an
// error page that echoes them, not from a failed connection.
func TestLinkErrorsHoldNoSecret(t *testing.T) {
	ls := newLinkSetup(t, enteapitest.Config{}, enteapitest.LinkOptions{Password: "pw"}, 1)
	ctx := context.Background()
	c := ls.client(t, linkUA)
	info, err := c.Info(ctx)
	require.NoError(t, err)
	ph, err := info.Settings.PassHash("pw")
	require.NoError(t, err)
	jwt, err := c.VerifyPassword(ctx, ph)
	require.NoError(t, err)
	c = c.WithJWT(jwt).WithDeviceToken(info.DeviceToken)
	tok, id := ls.url.AccessToken, ls.files[0].ID
	secrets := map[string]string{"token": tok, "jwt": jwt, "device token": info.DeviceToken, "pass hash": ph,
		"key base58": publink.EncodeKey(ls.url.Key), "key hex": hex.EncodeToString(ls.url.Key),
		"key base64": base64.StdEncoding.EncodeToString(ls.url.Key)}
	echo := `{"error":"refused token=` + tok + ` jwt=` + jwt + ` device=` + info.DeviceToken + `"}`
	dl := fmt.Sprintf("GET /public-collection/files/download/%d", id)
	ls.s.Inject(dl, enteapitest.StatusBody(502, echo), enteapitest.StatusBody(401, echo), enteapitest.StatusBody(502, strings.Repeat("x", 180)+echo))
	ls.s.Inject("GET /public-collection/diff", enteapitest.StatusBody(410, echo), enteapitest.CutAfter(5))
	ls.s.Inject("GET /public-collection/info", enteapitest.StatusBody(400, "<html>"+echo+"</html>"))

	var errors []error
	for range 3 {
		_, err := c.DownloadFile(ctx, id)
		errors = append(errors, err)
	}
	for range 2 {
		_, err := c.Diff(ctx, 0)
		errors = append(errors, err)
	}
	_, err = c.Info(ctx)
	errors = append(errors, err)
	_, err = c.VerifyPassword(ctx, "d3Jvbmc=")
	errors = append(errors, err)
	ls.s.Close() // every request now fails to connect
	_, err = c.DownloadFile(ctx, id)
	errors = append(errors, err)
	_, err = c.Diff(ctx, 0)
	errors = append(errors, err)
	for i, err := range errors {
		require.Error(t, err, "case %d", i)
		for what, s := range secrets {
			assert.NotContains(t, err.Error(), s, "case %d holds the %s: %v", i, what, err)
			assert.NotContains(t, err.Error(), s[:8], "case %d holds a piece of the %s: %v", i, what, err)
		}
	}
}
