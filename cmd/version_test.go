package cmd

import (
	"runtime/debug"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	for _, c := range []struct {
		name, stamped string
		bi            *debug.BuildInfo
		ok            bool
		want          string
	}{
		{"stamped wins", "v1.2.3", vcs("0123456789abcdef0123", "false"), true, "v1.2.3"},
		{"module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, true, "v0.4.0"},
		{"clone build", "", vcs("0123456789abcdef0123", "false"), true, "rev-0123456789ab"},
		{"dirty clone", "", vcs("0123456789abcdef0123", "true"), true, "rev-0123456789ab-dirty"},
		{"no vcs", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"no build info", "", nil, false, "dev"},
	} {
		if got := versionFrom(c.stamped, c.bi, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCommitFrom(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name, stamped string
		bi            *debug.BuildInfo
		ok            bool
		want          string
	}{
		{"stamped wins", "fedcba", vcs, true, "fedcba"},
		{"clone build, whole and dirty", "", vcs, true, "0123456789abcdef0123-dirty"},
		{"module build has none", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, true, ""},
		{"no build info", "", nil, false, ""},
	} {
		if got := commitFrom(c.stamped, c.bi, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestVersionLine(t *testing.T) {
	if got, want := versionLineFrom("v1.0.0", "abc123", "go1.26.0", "linux/arm"), "v1.0.0 (commit abc123, go1.26.0 linux/arm)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := versionLineFrom("v1.0.0", "", "go1.26.0", "linux/arm"), "v1.0.0 (go1.26.0 linux/arm)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
