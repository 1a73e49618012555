package cmd

import "runtime/debug"

// version is set at build time with -ldflags "-X .../cmd.version=..."
// (make build does); otherwise quakVersion reads the build info.
var version = ""

// quakVersion is the version quak reports: the stamped one, else the module
// version `go install module@version` records, else the VCS revision a
// build from a clone records, else "dev".
func quakVersion() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(version, bi, ok)
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
	var rev, dirty string
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
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "rev-" + rev + dirty
}
