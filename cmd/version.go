package cmd

import (
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with -ldflags "-X
// .../cmd.version=... -X .../cmd.commit=..." (make build and make release
// do); otherwise quakVersion and quakCommit read the build info.
var (
	version = ""
	commit  = ""
)

// quakVersion is the version quak reports: the stamped one, else the module
// version `go install module@version` records, else the VCS revision a
// build from a clone records, else "dev".
func quakVersion() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(version, bi, ok)
}

// versionLine is what quak --version prints after "quak version ": the
// version, the commit it was built from when known, and the Go toolchain
// and platform.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	return versionLineFrom(versionFrom(version, bi, ok), commitFrom(commit, bi, ok), runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

func versionLineFrom(v, rev, goVersion, platform string) string {
	if rev == "" {
		return v + " (" + goVersion + " " + platform + ")"
	}
	return v + " (commit " + rev + ", " + goVersion + " " + platform + ")"
}

func versionFrom(stamped string, bi *debug.BuildInfo, ok bool) string {
	if stamped != "" {
		return stamped
	}
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := vcsOf(bi)
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "rev-" + rev + dirty
}

// commitFrom is the full commit quak was built from: the stamped one,
// else the VCS revision a build from a clone records, else "".
func commitFrom(stamped string, bi *debug.BuildInfo, ok bool) string {
	if stamped != "" || !ok || bi == nil {
		return stamped
	}
	rev, dirty := vcsOf(bi)
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// vcsOf is the revision a build records and "-dirty" when its tree had
// changes.
func vcsOf(bi *debug.BuildInfo) (rev, dirty string) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	return rev, dirty
}
