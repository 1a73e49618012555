package cmd

import (
	"fmt"
	"sort"
	"strings"
)

// Exit codes, the same for every command. exitCodes below says what each
// means; the help texts and docs/scripting.md are made from it.
const (
	exitOK          = 0   // everything done
	exitFatal       = 1   // any other fatal error
	exitPartial     = 2   // some files failed; the rest were saved
	exitLogin       = 3   // not logged in, or the session was rejected
	exitLocked      = 4   // another quak run holds the backup folder's lock
	exitUnusableDir = 5   // the backup folder is missing, not writable, or another account's
	exitStale       = 6   // quak status: no fully successful run within --max-age
	exitNoDownload  = 7   // a public link's owner turned downloads off
	exitUsage       = 64  // bad command line
	exitTempFail    = 75  // the server could not be reached: try again later (EX_TEMPFAIL)
	exitInterrupt   = 130 // stopped by Ctrl-C (SIGINT)
	exitTerminated  = 143 // stopped by SIGTERM
)

// exitCode is one row of quak's exit-code table.
type exitCode struct {
	code int
	name string
	// meaning is what the code says, for every command that can end with it.
	meaning string
	// rank orders the codes for runs over several folders (--all), which
	// end with the worst of their codes: 1 is the worst.
	rank int
}

// exitCodes is the one table of exit codes, in the order the help and the
// docs list them. The ranks put an unreachable server (75) below the
// failures a person must fix (1, 5, 3), which another folder's run would
// otherwise hide, and above a held lock, a stale backup and failed files:
// the run it ended did not back up at all, but the next may well succeed
// by itself. 64 ranks as 1.
var exitCodes = []exitCode{
	{exitOK, "ok", "success", 10},
	{exitFatal, "fatal", "any other fatal error (the message says what, and which file)", 3},
	{exitPartial, "partial", "some files failed and everything else was saved (status: the backup is not healthy; verify: it found problems)", 9},
	{exitLogin, "login", "not logged in, or the server rejected the session: run quak login (a public link: its password is needed, or was wrong)", 5},
	{exitLocked, "locked", "another quak run holds the backup folder's lock", 7},
	{exitUnusableDir, "unusable-dir", "the backup folder is unusable: missing, not writable, or another account's", 4},
	{exitStale, "stale", "quak status only: no fully successful run within --max-age", 8},
	{exitNoDownload, "no-download", "a public link's owner turned downloads off: quak honours that and saved nothing", 4},
	{exitUsage, "usage", albumsUsageHelp, 3},
	{exitTempFail, "tempfail", "the server or its object store could not be reached: the run stopped at once, files not tried are not failed; try again later (EX_TEMPFAIL)", 6},
	{exitInterrupt, "interrupted", "interrupted by Ctrl-C (SIGINT)", 2},
	{exitTerminated, "terminated", "stopped by SIGTERM", 1},
}

// worse is the worse of two exit codes by their rank; between codes as
// bad, a stays.
func worse(a, b int) int {
	if rank(b) < rank(a) {
		return b
	}
	return a
}

// rank is code's rank in exitCodes; a code not listed counts as exitFatal.
func rank(code int) int {
	for _, c := range exitCodes {
		if c.code == code {
			return c.rank
		}
	}
	return rank(exitFatal)
}

// worstFirst is every code, worst first, codes of one rank together.
func worstFirst() [][]int {
	byRank := map[int][]int{}
	for _, c := range exitCodes {
		byRank[c.rank] = append(byRank[c.rank], c.code)
	}
	ranks := make([]int, 0, len(byRank))
	for r := range byRank {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	out := make([][]int, 0, len(ranks))
	for _, r := range ranks {
		out = append(out, byRank[r])
	}
	return out
}

// allOrderText says how --all picks its exit code, for help texts.
func allOrderText() string {
	var parts []string
	for _, codes := range worstFirst() {
		var same []string
		for _, c := range codes {
			same = append(same, fmt.Sprint(c))
		}
		parts = append(parts, strings.Join(same, " and "))
	}
	text := "With --all, quak exits with the worst of the folders' codes, worst first: " +
		strings.Join(parts, ", ") + " (a code not listed counts as 1)."
	return strings.TrimSuffix(hangingIndent("", text, 76), "\n")
}

// usageHelp is what 64 means for a command with no --albums, whose help
// says "" of it.
const usageHelp = "bad command line"

// albumsUsageHelp is what 64 means for a command with --albums.
const albumsUsageHelp = "bad command line, or an --albums pattern that matches no album"

// exitHelp is the "Exit codes:" part of a command's help: the codes in
// own, in exitCodes' order, each with the meaning own gives it or, for "",
// the table's (for 64, usageHelp). The lines are indented so that help shows them as a list
// and the man pages keep them as they are.
func exitHelp(own map[int]string) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n\n")
	for _, c := range exitCodes {
		m, ok := own[c.code]
		if !ok {
			continue
		}
		switch {
		case m == "" && c.code == exitUsage:
			m = usageHelp
		case m == "":
			m = c.meaning
		}
		b.WriteString(hangingIndent(fmt.Sprintf("    %-4d ", c.code), m, 76))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// everyExitCode is exitHelp for every code with the table's meanings.
func everyExitCode() string {
	own := map[int]string{}
	for _, c := range exitCodes {
		own[c.code] = c.meaning
	}
	return exitHelp(own)
}

// hangingIndent wraps text at width after lead, indenting further lines
// to lead's width.
func hangingIndent(lead, text string, width int) string {
	var b strings.Builder
	line := lead
	pad := strings.Repeat(" ", len(lead))
	for i, w := range strings.Fields(text) {
		if i > 0 && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = pad + w
			continue
		}
		if i > 0 {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// exitCodesMarkdown is docs/scripting.md's exit-code table.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | meaning | `--all` rank |\n|---|---|---|---|\n")
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "| %d | `%s` | %s | %d |\n", c.code, c.name, c.meaning, c.rank)
	}
	return b.String()
}
