package enteapitest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
)

func TestDemoLinkOpensItsAlbum(t *testing.T) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	l, err := publink.Parse(enteapitest.DemoLink(s).URL())
	require.NoError(t, err)
	c, err := apiclient.NewLinkClient(s.URL(), &http.Client{}, "quak/test", l.AccessToken)
	require.NoError(t, err)
	info, err := c.Info(context.Background())
	require.NoError(t, err)
	assert.True(t, info.Settings.EnableDownload)
	page, err := c.Diff(context.Background(), 0)
	require.NoError(t, err)
	assert.Len(t, page.Diff, 3)
}
