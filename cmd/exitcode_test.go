package cmd

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every exit code is in the table once, with a name, a meaning and a rank.
func TestExitCodeTableIsComplete(t *testing.T) {
	seen := map[int]bool{}
	names := map[string]bool{}
	for _, c := range exitCodes {
		if seen[c.code] || names[c.name] {
			t.Errorf("exit code %d (%s) is in the table twice", c.code, c.name)
		}
		seen[c.code], names[c.name] = true, true
		if c.name == "" || c.meaning == "" || c.rank < 1 {
			t.Errorf("exit code %d lacks a name, a meaning or a rank: %+v", c.code, c)
		}
	}
	for _, code := range []int{exitOK, exitFatal, exitPartial, exitLogin, exitLocked, exitUnusableDir, exitStale, exitUsage,
		exitTempFail, exitInterrupt, exitTerminated} {
		if !seen[code] {
			t.Errorf("exit code %d is not in the table", code)
		}
	}
	if rank(exitOK) <= rank(exitPartial) {
		t.Error("success must rank below every failure")
	}
}

// The help of every command that lists exit codes lists them in the
// table's order, each code once, and says how --all picks its code.
func TestHelpListsExitCodesInTheTablesOrder(t *testing.T) {
	order := map[int]int{}
	for i, c := range exitCodes {
		order[c.code] = i
	}
	line := regexp.MustCompile(`(?m)^    (\d+) +\S`)
	var walk func(c *cobra.Command)
	listed := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !strings.Contains(c.Long, "Exit codes:") {
			return
		}
		listed++
		last := -1
		for _, m := range line.FindAllStringSubmatch(c.Long, -1) {
			code, _ := strconv.Atoi(m[1])
			i, ok := order[code]
			if !ok || i <= last {
				t.Errorf("%s --help lists exit code %d out of the table's order", c.CommandPath(), code)
			}
			last = i
		}
	}
	walk(newRootCmd(deps{g: &globalFlags{}}))
	if listed < 6 {
		t.Fatalf("only %d commands list their exit codes", listed)
	}
	root := newRootCmd(deps{g: &globalFlags{}})
	for _, name := range []string{"backup", "status"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.ReplaceAll(c.Long, "\n", " "), "worst first: 143, 130, 1 and 64, 5, 3, 75, 4, 6, 2, 0") {
			t.Errorf("%s --help does not give --all's order:\n%s", name, c.Long)
		}
	}
}
