package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/span"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

type statusOpts struct {
	net     netFlags
	maxAge  time.Duration
	json    bool
	offline bool
	multi   multiFlags
}

func newStatusCmd(d deps) *cobra.Command {
	o := &statusOpts{}
	c := &cobra.Command{
		Use:   "status DIR",
		Short: "Say whether DIR's backup is healthy, for people and monitors",
		Long: `Print what DIR's backup looks like: the account and server, the last run
(start, end, outcome, counts), the last fully successful run, the files still
failing and why, what the backup holds, the free space on its file system,
and whether the session is still accepted (one cheap request; --offline
skips it). It reads DIR/.quak/last-run.json, which every backup run writes,
so it works while a backup runs.

A monitor runs it and alerts on the exit code. When several problems apply,
the first in the order 5, 3, 6, 2 is the code. --all reports on every folder
recorded with quak backup --account, each checked with its own account's
session.

` + exitHelp(map[int]string{
			exitOK: "healthy",
			exitPartial: "the last run failed, was partial, was refused before it started, was no full backup " +
				"(--metadata-only, a refused prune) or could not record itself, or the state database does not read",
			exitLogin:       "not logged in, the server rejects the session, or it is another account's: run quak login",
			exitUnusableDir: "DIR is missing or has no recorded run, or no file can be created in DIR/.quak",
			exitStale: "stale: no fully successful run within --max-age, a last success in the future (clock skew), " +
				"or a first run still in progress",
			exitFatal: "", exitUsage: "",
		}) + "\n\n" + allOrderText(),
		Args: o.multi.args("status"),
		RunE: func(c *cobra.Command, args []string) error {
			if o.multi.all {
				return runStatusAll(c.Context(), d, o)
			}
			return runStatus(c.Context(), d, o, args[0])
		},
	}
	f := c.Flags()
	durationVar(f, &o.maxAge, "max-age", 36*time.Hour, "the oldest a last fully successful run may be (36h, 2d, 1w)")
	f.BoolVar(&o.json, "json", false, "one JSON object on stdout")
	f.BoolVar(&o.offline, "offline", false, "do not ask the server whether the session is valid")
	o.net.register(f)
	o.multi.register(f, "report on")
	return c
}

// statusError ends quak status with a code of its own.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// runRecord is the part of last-run.json quak status reads.
type runRecord struct {
	Start      time.Time        `json:"start"`
	End        time.Time        `json:"end"`
	Outcome    string           `json:"outcome"`
	Error      *string          `json:"error"`
	Email      string           `json:"email"`
	UserID     int64            `json:"userID"`
	Endpoint   string           `json:"endpoint"`
	Counts     map[string]int   `json:"counts"`
	Failures   []backup.Failure `json:"failures"`
	TotalFiles int              `json:"totalFiles"`
	TotalBytes int64            `json:"totalBytes"`
	ExitCode   int              `json:"exitCode"`
	// MetadataOnly and PruneRefused say the run was no full backup.
	MetadataOnly bool   `json:"metadataOnly"`
	PruneRefused string `json:"pruneRefused"`
}

// refusalRecord is last-refused.json: a run refused before it started.
type refusalRecord struct {
	Time     time.Time `json:"time"`
	ExitCode int       `json:"exitCode"`
	Error    string    `json:"error"`
}

func readRecord(path string) (*runRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r runRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// problem is one reason the backup is not healthy, with its exit code.
type problem struct {
	code int
	msg  string
}

func runStatus(ctx context.Context, d deps, o *statusOpts, dir string) error {
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := needFolder(dir, "is the disk mounted?"); err != nil {
		return err
	}
	qdir := filepath.Join(abs, backup.StateDir)
	last, err := readRecord(filepath.Join(qdir, backup.LastRunFile))
	if errors.Is(err, os.ErrNotExist) {
		return noRecord(abs, dir)
	}
	if err != nil {
		return err
	}
	success, err := readRecord(filepath.Join(qdir, backup.LastSuccessFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var problems []problem
	session := "not checked (--offline)"
	if !o.offline {
		session = checkSession(ctx, d, &o.net, abs, o.multi.account, last, &problems)
	}
	switch {
	case success == nil:
		problems = append(problems, problem{exitStale, "no backup run has fully succeeded yet"})
	case success.End.After(now().Add(time.Minute)):
		problems = append(problems, problem{exitStale, fmt.Sprintf("clock skew: the last fully successful run ended %s, %s in the future",
			success.End.Format(time.RFC3339), ago(success.End.Sub(now())))})
	case now().Sub(success.End) > o.maxAge:
		problems = append(problems, problem{exitStale, fmt.Sprintf("the last fully successful run ended %s ago, more than --max-age %s",
			ago(now().Sub(success.End)), span.Text(o.maxAge))})
	}
	problems = append(problems, lastRunProblems(last)...)
	if p := refusedSince(qdir); p != nil {
		problems = append(problems, *p)
	}
	if p := stateProblem(qdir); p != nil {
		problems = append(problems, *p)
	}
	if p := unwritable(qdir); p != nil {
		problems = append(problems, *p)
	}
	free := freeSpace(abs)
	views, err := backup.ReadViews(abs)
	if err != nil {
		problems = append(problems, problem{exitPartial, err.Error()})
	}
	code := exitOK
	for _, want := range []int{exitUnusableDir, exitLogin, exitStale, exitPartial} {
		for _, p := range problems {
			if p.code == want && code == exitOK {
				code = want
			}
		}
	}
	if o.json {
		writeStatusJSON(d, abs, last, success, session, free, views, problems, code)
	} else {
		writeStatus(d.stdout, abs, last, success, session, free, views, problems, now())
	}
	if code == exitOK {
		return nil
	}
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, p.msg)
	}
	return &statusError{code: code, msg: "backup not healthy: " + strings.Join(msgs, "; ")}
}

// lastRunProblems is what the last run's record says is wrong: how it
// ended and why, albums it could not list, and runs that were no full
// backup.
func lastRunProblems(last *runRecord) []problem {
	var out []problem
	if last.Outcome != "ok" {
		msg := fmt.Sprintf("the last run ended %s (exit code %d)", last.Outcome, last.ExitCode)
		if last.Error != nil && *last.Error != "" {
			msg += ": " + *last.Error
		}
		out = append(out, problem{exitPartial, msg})
	}
	if n := last.Counts["albumsFailed"]; n > 0 {
		out = append(out, problem{exitPartial, plural(n, "album") + " could not be listed in the last run"})
	}
	if last.MetadataOnly {
		out = append(out, problem{exitPartial, "the last run was --metadata-only: it refreshed metadata and downloaded nothing, so it was no full backup"})
	}
	if last.PruneRefused != "" {
		out = append(out, problem{exitPartial, "the last run's --prune was refused, so it was no full backup: " + last.PruneRefused})
	}
	return out
}

// refusedSince reports a run refused before it started (lock held,
// session unusable) since the last recorded run, whose record removes it.
func refusedSince(qdir string) *problem {
	b, err := os.ReadFile(filepath.Join(qdir, backup.LastRefusedFile))
	if err != nil {
		return nil
	}
	var r refusalRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return &problem{exitPartial, "a run was refused before it started, and its record does not read: " + err.Error()}
	}
	return &problem{exitPartial, fmt.Sprintf("the last run, at %s, was refused before it started (exit code %d): %s",
		r.Time.Format(time.RFC3339), r.ExitCode, r.Error)}
}

// stateProblem reports a state database that cannot be read or is not a
// database. It reads the file's first page instead of opening it, so a
// backup starting this moment never finds the database in use.
func stateProblem(qdir string) *problem {
	f, err := os.Open(filepath.Join(qdir, "state.db"))
	if err != nil {
		return &problem{exitPartial, "the state database does not open: " + err.Error()}
	}
	defer func() { _ = f.Close() }()
	if !state.LooksValid(f) {
		return &problem{exitPartial, "the state database does not open: it is not a quak state database (damaged?)"}
	}
	return nil
}

// createIn makes and removes a file in dir; tests replace it to stand for
// a file system remounted read-only, which root cannot simulate otherwise.
var createIn = func(dir string) error {
	f, err := os.CreateTemp(dir, ".status-*")
	if err != nil {
		return err
	}
	_ = f.Close()
	return os.Remove(f.Name())
}

// unwritable reports a .quak folder no file can be written in (a disk
// remounted read-only, say): every run would stop at once, unable to
// record even that it could not start.
func unwritable(qdir string) *problem {
	if err := createIn(qdir); err != nil {
		return &problem{exitUnusableDir, "the backup folder cannot be written, so no backup can run or record how it went: " + err.Error()}
	}
	return nil
}

// noRecord is status's answer for a folder with no last-run.json: a first
// run in progress, a record the last run could not write, or no backup.
func noRecord(abs, dir string) error {
	if _, err := os.Stat(filepath.Join(abs, backup.StateDir, "state.db")); err != nil {
		return &backup.DirError{Dir: dir, Reason: "has no recorded backup run (run quak backup first)"}
	}
	unlock, err := backup.Lock(abs)
	if errors.Is(err, backup.ErrLocked) {
		return &statusError{code: exitStale, msg: "backup not healthy yet: the first backup run is in progress and has not finished"}
	}
	if err == nil {
		unlock()
	}
	return &statusError{code: exitPartial, msg: "backup not healthy: the last run could not record how it went (" + backup.LastRunFile +
		" is missing: was the disk full?)"}
}

// checkSession asks the server whether the stored session is accepted and
// belongs to the backup's account.
func checkSession(ctx context.Context, d deps, n *netFlags, dir, email string, last *runRecord, problems *[]problem) string {
	a, c, err := loadSessionFor(d, n, dir, email)
	if errors.Is(err, errs.ErrNotLoggedIn) {
		*problems = append(*problems, problem{exitLogin, "not logged in"})
		return "not logged in"
	}
	if err != nil {
		return "could not be checked: " + err.Error()
	}
	if a.UserID != last.UserID {
		*problems = append(*problems, problem{exitLogin, fmt.Sprintf("logged in as %s, but this is the backup of %s", a.Email, last.Email)})
		return "another account's"
	}
	if _, err := c.SessionValidity(ctx); err != nil {
		if errors.Is(err, errs.ErrNotLoggedIn) {
			*problems = append(*problems, problem{exitLogin, "the server rejects the session"})
			return "rejected by the server"
		}
		return "could not be checked: " + err.Error()
	}
	return "valid"
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

func writeStatus(w io.Writer, dir string, last, success *runRecord, session string, free int64, views *backup.Remembered,
	problems []problem, now time.Time) {
	fmt.Fprintf(w, "Backup:        %s\n", dir)
	fmt.Fprintf(w, "Account:       %s (user %d) on %s\n", last.Email, last.UserID, last.Endpoint)
	fmt.Fprintf(w, "Session:       %s\n", session)
	c := last.Counts
	fmt.Fprintf(w, "Last run:      %s to %s (%s ago), %s: %d new, %d linked, %d metadata updates, %d failed (exit code %d)\n",
		last.Start.Format(time.RFC3339), last.End.Format(time.RFC3339), ago(now.Sub(last.End)), last.Outcome,
		c["new"], c["linked"], c["metadata"], c["failed"], last.ExitCode)
	if success != nil {
		fmt.Fprintf(w, "Last success:  %s, %s ago\n", success.End.Format(time.RFC3339), ago(now.Sub(success.End)))
	} else {
		fmt.Fprintln(w, "Last success:  never")
	}
	fmt.Fprintf(w, "In the backup: %d files, %s\n", last.TotalFiles, humanBytes(last.TotalBytes))
	if free >= 0 {
		fmt.Fprintf(w, "Free space:    %s\n", humanBytes(free))
	}
	fmt.Fprintf(w, "Metadata:      %s\n", viewsText(views))
	if len(last.Failures) > 0 {
		fmt.Fprintf(w, "Failing:       %d files\n", c["failed"])
		for i, f := range last.Failures {
			if i == 20 {
				fmt.Fprintf(w, "  … and %d more (quak status --json lists them)\n", len(last.Failures)-i)
				break
			}
			fmt.Fprintf(w, "  file %d, %s / %s: %s: %s\n", f.FileID, f.Album, orUnknown(f.Title), f.Reason, f.Error)
		}
	}
	if len(problems) == 0 {
		fmt.Fprintln(w, "Status:        healthy")
		return
	}
	for _, p := range problems {
		fmt.Fprintf(w, "Problem:       %s\n", p.msg)
	}
}

func writeStatusJSON(d deps, dir string, last, success *runRecord, session string, free int64, views *backup.Remembered,
	problems []problem, code int) {
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, p.msg)
	}
	var lastSuccess any
	if success != nil {
		lastSuccess = success.End.Format(time.RFC3339)
	}
	failures := last.Failures
	if failures == nil {
		failures = []backup.Failure{}
	}
	newJSONLines(d).write("status", map[string]any{
		"dir": dir, "email": last.Email, "userID": last.UserID, "endpoint": last.Endpoint, "session": session,
		"lastRun": map[string]any{
			"start": last.Start.Format(time.RFC3339), "end": last.End.Format(time.RFC3339), "outcome": last.Outcome,
			"exitCode": last.ExitCode, "counts": last.Counts,
		},
		"lastSuccess": lastSuccess, "failures": failures, "totalFiles": last.TotalFiles, "totalBytes": last.TotalBytes,
		"freeBytes": free, "healthy": code == exitOK, "problems": msgs, "exitCode": code, "views": viewsJSON(views),
	})
}
