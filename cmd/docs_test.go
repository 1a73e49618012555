package cmd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// update rewrites the generated documentation instead of comparing it with
// what is committed; script/man runs this file's tests with it.
var update = flag.Bool("update", false, "rewrite docs/man and the exit-code table in docs/scripting.md")

const (
	manDir        = "../docs/man"
	scriptingDoc  = "../docs/scripting.md"
	exitCodesOpen = "<!-- exit codes: made by script/man from cmd/exitcode.go; edit them there -->\n"
	exitCodesEnd  = "<!-- end of exit codes -->\n"
)

// manDate is the date in the man pages' header, fixed so that the pages
// come out the same on every day they are made.
var manDate = time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)

// markdownSafe escapes what cobra's man pages would read as Markdown in
// text written for a terminal: DIR/<album> would lose <album> as HTML, and
// ._*, *.xmp turn to italics. Lines indented four spaces are kept as they
// are, as Markdown keeps them.
func markdownSafe(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "    ") {
			lines[i] = markdownEscapes.Replace(l)
		}
	}
	return strings.Join(lines, "\n")
}

var markdownEscapes = strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`, "*", `\*`, "_", `\_`)

// writeManPages writes a man page for quak and each of its commands into dir.
func writeManPages(dir string) error {
	root := newRootCmd(deps{g: &globalFlags{}})
	var prepare func(c *cobra.Command)
	prepare = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // its "HISTORY" carries the day it was made
		c.Short, c.Long = markdownSafe(c.Short), markdownSafe(c.Long)
		c.Flags().VisitAll(func(f *pflag.Flag) { f.Usage = markdownSafe(f.Usage) })
		for _, sub := range c.Commands() {
			prepare(sub)
		}
	}
	prepare(root)
	return doc.GenManTree(root, &doc.GenManHeader{Section: "1", Date: &manDate, Source: "quak", Manual: "quak manual"}, dir)
}

// exitCodesSection is what docs/scripting.md holds between its markers.
func exitCodesSection() string {
	return exitCodesMarkdown() + "\n" + strings.ReplaceAll(allOrderText(), "\n", " ") + "\n"
}

// The man pages in docs/man are what the commands' help says today; run
// script/man after changing a command, a flag or a help text.
func TestManPagesAreCurrent(t *testing.T) {
	fresh := t.TempDir()
	if err := writeManPages(fresh); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.RemoveAll(manDir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(manDir, os.DirFS(fresh)); err != nil {
			t.Fatal(err)
		}
	}
	want, got := pages(t, fresh), pages(t, manDir)
	if len(want) < 10 {
		t.Fatalf("only %d man pages were made", len(want))
	}
	for name, b := range want {
		switch c, ok := got[name]; {
		case !ok:
			t.Errorf("docs/man/%s is missing: run script/man", name)
		case !bytes.Equal(c, b):
			t.Errorf("docs/man/%s is stale: run script/man", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/man/%s has no command any more: run script/man", name)
		}
	}
}

// pages reads every file in dir by name.
func pages(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// Two runs make the same pages: nothing in them depends on the day, the
// machine or the order of a map.
func TestManPagesAreTheSameEveryTime(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := writeManPages(a); err != nil {
		t.Fatal(err)
	}
	if err := writeManPages(b); err != nil {
		t.Fatal(err)
	}
	pa, pb := pages(t, a), pages(t, b)
	names := make([]string, 0, len(pa))
	for n := range pa {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !bytes.Equal(pa[n], pb[n]) {
			t.Errorf("%s differs between two runs", n)
		}
		if bytes.Contains(pa[n], []byte("Auto generated")) {
			t.Errorf("%s carries cobra's dated tag", n)
		}
	}
}

// docs/scripting.md's exit-code table is the one in cmd/exitcode.go.
func TestScriptingDocExitCodesAreCurrent(t *testing.T) {
	b, err := os.ReadFile(scriptingDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, exitCodesOpen)
	end := strings.Index(text, exitCodesEnd)
	if start < 0 || end < start {
		t.Fatalf("docs/scripting.md has lost its exit-code markers:\n%s%s", exitCodesOpen, exitCodesEnd)
	}
	have := text[start+len(exitCodesOpen) : end]
	if *update {
		text = text[:start+len(exitCodesOpen)] + exitCodesSection() + text[end:]
		if err := os.WriteFile(scriptingDoc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if have != exitCodesSection() {
		t.Errorf("docs/scripting.md's exit-code table is stale: run script/man\nhave:\n%s\nwant:\n%s", have, exitCodesSection())
	}
}
