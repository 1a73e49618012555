package cmd

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
)

// suggestFlags is a flag set to mistype: two flags one letter apart, two
// that differ only at the end, a long one, and a hidden one.
func suggestFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, name := range []string{"quiet", "quieten", "tag-a", "tag-b", "dry-run", "secret-mode"} {
		fs.Bool(name, false, "")
	}
	_ = fs.MarkHidden("secret-mode")
	return fs
}

// A mistyped flag gets the flags within maxFlagDistance edits of it, and
// those it begins with three letters or more; never a hidden one; nearest
// first, then by name.
func TestNearFlagsBoundaries(t *testing.T) {
	assert.Equal(t, 2, maxFlagDistance)
	fs := suggestFlags()
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"dry-rn", []string{"--dry-run"}},             // 1 edit
		{"qxyet", []string{"--quiet"}},                // exactly maxFlagDistance edits
		{"qxyzt", []string{}},                         // one more, and no beginning
		{"QXYET", []string{"--quiet"}},                // capitals count as the letters
		{"dry", []string{"--dry-run"}},                // a beginning of three letters, 4 edits away
		{"dr", []string{}},                            // a beginning of two, 5 edits away
		{"qu", []string{}},                            // a beginning of two, 3 edits away
		{"quie", []string{"--quiet", "--quieten"}},    // 1 edit, then a beginning 3 edits away
		{"quieter", []string{"--quieten", "--quiet"}}, // 1 edit before 2, whatever the names
		{"quietenx", []string{"--quieten"}},           // 1 edit; quiet is 3 away and not begun
		{"tag-c", []string{"--tag-a", "--tag-b"}},     // a tie at 1: by name
		{"quietxx", []string{"--quiet", "--quieten"}}, // a tie at 2: by name
		{"secret-mod", []string{}},                    // hidden, 1 edit away: never suggested
		{"secret", []string{}},                        // nor by its beginning
	} {
		assert.Equal(t, tc.want, nearFlags(fs, tc.typed), "--%s", tc.typed)
	}
}

// The hint names them in that order, as quak backup has its flags.
func TestMistypedFlagHintListsTheNearestFirst(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ typed, want string }{
		{"--lin", "did you mean --link or --link-file?"},                // 1 edit, then a beginning
		{"--skip", "did you mean --skip-videos or --skip-live-photos?"}, // two beginnings: the nearer first
		{"--al", "did you mean --all?"},                                 // 1 edit; --albums is begun by two letters only
	} {
		code, _, errOut := e.run("backup", tc.typed, t.TempDir())
		assert.Equal(t, exitUsage, code, errOut)
		assert.Equal(t, []string{tc.want}, hints(errOut), tc.typed)
	}
}
