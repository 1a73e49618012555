package thumbnails

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMissingNamesTheProgramAnOriginalNeeds(t *testing.T) {
	heic := []byte("\x00\x00\x00\x18ftypheic")
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0}
	only := func(names ...string) Tools {
		return Tools{LookPath: func(n string) (string, error) {
			for _, have := range names {
				if n == have {
					return "/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}}
	}
	for _, tc := range []struct {
		name  string
		tools Tools
		head  []byte
		ft    int
		want  string
	}{
		{"video, no ffmpeg", only(), nil, 1, "ffmpeg"},
		{"video, ffmpeg", only("ffmpeg"), nil, 1, ""},
		{"heic, nothing", only("ffmpeg"), heic, 0, "heif-dec"},
		{"heic, heif-dec", only("heif-dec"), heic, 0, ""},
		{"heic, heif-convert", only("heif-convert"), heic, 0, ""},
		{"jpeg", only(), jpeg, 0, ""},
		{"unknown", only(), []byte("hello world!"), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.tools.Missing(tc.head, tc.ft))
		})
	}
}

func TestMissesAnyTellsAnyProgramMissing(t *testing.T) {
	with := func(names ...string) Tools {
		return Tools{LookPath: func(n string) (string, error) {
			for _, have := range names {
				if n == have {
					return "/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}}
	}
	assert.False(t, with("ffmpeg", "heif-dec").MissesAny())
	assert.True(t, with("ffmpeg").MissesAny())
	assert.True(t, with("heif-convert").MissesAny())
}
