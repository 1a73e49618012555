package cmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10M", 10 << 20, true},
		{"10m", 10 << 20, true},
		{"512K", 512 << 10, true},
		{"1.5G", 3 << 29, true},
		{"2048", 2048, true},
		{"10MB", 10 << 20, true},
		{"10M/s", 10 << 20, true},
		{"0", 0, true},
		{"off", 0, true},
		{"12", 0, false},
		{"-1M", 0, false},
		{"fast", 0, false},
		{"10T", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRate(tc.in)
			if !tc.ok {
				assert.Error(t, err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBwlimitAndStreamsAreFlagsOfBackup(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 1000, Seed: 1})
	if code, _, errOut := e.run("backup", "--bwlimit", "fast", dir); code != exitUsage || !strings.Contains(errOut, "not a rate") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := e.run("backup", "--streams", "0", dir); code != exitUsage || !strings.Contains(errOut, "--streams 1 to 16") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if code, out, errOut := e.run("backup", "--bwlimit", "10M", "--streams", "1", dir); code != exitOK {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
}
