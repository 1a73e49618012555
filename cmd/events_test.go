package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/backup"
)

// Every kind of backup event but Progress has its own JSON type, listed in
// docs/scripting.md's table; the kinds of the sidecars and of proven prunes
// have their human line too.
func TestEveryEventKindIsPrintedAndDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/scripting.md")
	require.NoError(t, err)
	seen := map[string]backup.Kind{}
	for k := backup.FileSaved; k <= backup.LocalRestored; k++ {
		if k == backup.Progress {
			continue
		}
		typ, ok := eventTypes[k]
		if !assert.True(t, ok, "kind %d has no JSON type", k) {
			continue
		}
		if other, dup := seen[typ]; dup {
			t.Errorf("kinds %d and %d are both %q", other, k, typ)
		}
		seen[typ] = k
		assert.Contains(t, string(doc), "`"+typ+"`", "docs/scripting.md's JSON table lacks %s", typ)
		if dry, ok := dryTypes[k]; ok {
			assert.Contains(t, string(doc), "`"+dry+"`", "docs/scripting.md's JSON table lacks %s", dry)
		}
	}

	for _, c := range []struct {
		e          backup.Event
		typ, human string
		field      string
		value      any
	}{
		{backup.Event{Kind: backup.ViewsChanged, Files: 3}, "views-changed",
			"converted the sidecars and date view to the folder's options: 3 files changed", "files", 3.0},
		{backup.Event{Kind: backup.WouldPrune, Path: "A/x.jpg", FileID: 7}, "would-prune",
			"would have moved to the trash: A/x.jpg", "fileID", 7.0},
		{backup.Event{Kind: backup.PruneKept, Path: "A/x.jpg", Err: errors.New("not proven")}, "prune-kept",
			"not moving A/x.jpg to the trash: not proven", "reason", "not proven"},
		{backup.Event{Kind: backup.FileRestored, Path: "A/x.jpg"}, "restored",
			"moved back from the trash (listed on the server again): A/x.jpg", "path", "A/x.jpg"},
	} {
		var stdout, stderr bytes.Buffer
		d := deps{stdout: &stdout, stderr: &stderr, now: func() time.Time { return time.Unix(0, 0) }}
		newPrinter(d, newJSONLines(d), nil).event(c.e)
		assert.Contains(t, stderr.String(), c.human)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &got), stdout.String())
		assert.Equal(t, c.typ, got["type"])
		assert.Equal(t, c.value, got[c.field], c.typ)
	}
}
