package cmd

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/account"
)

// Issue 41: without --streams, a backup finds the number of ranges of a
// large file from the connection (0 to the engine); --streams fixes it.
func TestStreamsAreFoundUnlessAsked(t *testing.T) {
	fs := pflag.NewFlagSet("backup", pflag.ContinueOnError)
	o := &backupOpts{fs: fs}
	o.register(fs)
	rs := &runSource{who: &account.Account{}}
	assert.Zero(t, backupOptions(deps{}, o, "dir", rs, &printer{}).Streams, "found from the connection")
	assert.Zero(t, backupOptions(deps{}, &backupOpts{streams: 8}, "dir", rs, &printer{}).Streams, "no flags read: not asked")
	require.NoError(t, fs.Parse([]string{"--streams", "6"}))
	assert.Equal(t, 6, backupOptions(deps{}, o, "dir", rs, &printer{}).Streams)
}
