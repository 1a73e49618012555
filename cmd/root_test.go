package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runQuak(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	d := deps{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = run(context.Background(), d, args)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runQuak(t, "--version")
	if code != exitOK || !strings.Contains(out, "quak version") {
		t.Fatalf("code %d, output %q", code, out)
	}
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	code, _, errOut := runQuak(t, "--no-such-flag")
	if code != exitUsage || !strings.Contains(errOut, "quak: error:") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}
