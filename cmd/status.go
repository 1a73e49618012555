package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/compare"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
)

type statusOpts struct {
	net     netFlags
	maxAge  time.Duration
	json    bool
	offline bool
	server  bool
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
so it works while a backup runs. Files the last quak verify found missing
or changed make it unhealthy, named, until a backup downloads them again.

--server also lists what the server holds now and compares it with what
the backup holds on disk, album by album: "the backup has 12,401 of the
12,405 files", and the files missing on either side with the reason (new
since the last run, which the next run takes; failing; left out by
filters; missing on disk; not in the backup). It reads the folder and
writes nothing there, but costs a request per album and per 2,500 files,
and waits for no running backup (exit 4 while one writes the state).

A monitor runs it and alerts on the exit code. When several problems apply,
the first in the order 5, 3, 6, 2 is the code. --all reports on every folder
recorded by quak backup, each checked with its own account's session.

` + exitHelp(map[int]string{
			exitOK: "healthy",
			exitPartial: "the last run failed, was partial, was refused before it started, was no full backup " +
				"(--metadata-only, a refused prune) or could not record itself; or the state database does not read, " +
				"the last verify found files missing or changed, or (--server) the backup lacks files the server holds " +
				"that are not new since the last run",
			exitLogin:       "not logged in, the server rejects the session, or it is another account's: run quak login",
			exitUnusableDir: "DIR is missing or has no recorded run, or no file can be created in DIR/.quak",
			exitLocked:      "--server: a backup is writing the state; compare when it ends",
			exitStale: "stale: no fully successful run within --max-age, a last success in the future (clock skew), " +
				"or a first run still in progress",
			exitTempFail: "--server: the server could not be reached to compare with it",
			exitFatal:    "", exitUsage: "",
		}) + "\n\n" + allOrderText(),
		Args: o.multi.args("status"),
		RunE: func(c *cobra.Command, args []string) error {
			if o.multi.all {
				return runOnAll(c.Context(), d, &o.multi, o.json, func(d deps, dir string) error {
					return runStatus(c.Context(), d, o, dir)
				})
			}
			return runStatus(c.Context(), d, o, args[0])
		},
	}
	f := c.Flags()
	durationVar(f, &o.maxAge, "max-age", 36*time.Hour, "the oldest a last fully successful run may be (36h, 2d, 1w)")
	f.BoolVar(&o.json, "json", false, "one JSON object on stdout")
	f.BoolVar(&o.offline, "offline", false, "do not ask the server whether the session is valid")
	f.BoolVar(&o.server, "server", false, "also list what the server holds and compare it with the backup, album by album (a request per album and per 2,500 files)")
	o.net.register(f)
	o.multi.register(f, "report on")
	return c
}

// statusError ends quak status with a code of its own.
type statusError struct {
	code int
	msg  string
	hint string // what to do, when the code's usual hint does not fit
	// inJSON: the command's JSON said all of it, so no "error" line follows.
	inJSON bool
}

func (e *statusError) Error() string { return e.msg }

// codeOf is the exit code of a kind of problem.
var codeOf = map[folder.Kind]int{
	folder.Unusable:  exitUnusableDir,
	folder.LoggedOut: exitLogin,
	folder.Stale:     exitStale,
	folder.Failing:   exitPartial,
}

// verdictCode is the code of the most urgent problem: unusable, logged
// out, stale, then failing.
func verdictCode(problems []folder.Problem) int {
	for _, want := range []folder.Kind{folder.Unusable, folder.LoggedOut, folder.Stale, folder.Failing} {
		for _, p := range problems {
			if p.Kind == want {
				return codeOf[want]
			}
		}
	}
	return exitOK
}

func runStatus(ctx context.Context, d deps, o *statusOpts, dir string) error {
	if o.server && o.offline {
		return &usageError{errors.New("--server asks the server what it holds, so it cannot go with --offline")}
	}
	now := time.Now
	if d.now != nil {
		now = d.now
	}
	if err := needFolder(dir); err != nil {
		return err
	}
	f := folder.At(dir)
	h, err := f.Health(folder.HealthCheck{Now: now(), MaxAge: o.maxAge, CanWrite: d.canWrite})
	var nr *folder.NoRecordError
	if errors.As(err, &nr) {
		code := exitPartial
		if nr.InProgress {
			code = exitStale
		}
		return &statusError{code: code, msg: nr.Error()}
	}
	var re *folder.RecordError
	if errors.As(err, &re) {
		return &statusError{code: exitPartial, msg: "backup not healthy: " + re.Error(),
			hint: "run `quak backup " + dir + "`: every run that starts writes the record again; until then how the last run went is not known"}
	}
	if err != nil {
		return err
	}
	session := "not checked (--offline)"
	var loggedOut *folder.Problem
	if !o.offline {
		check := checkSession
		if f.HasLink() {
			check = checkLinkSession
		}
		session, loggedOut = check(ctx, d, &o.net, f.Dir, o.multi.account, h.Last)
		if err := ctx.Err(); err != nil {
			return err // stopped while the server was asked: no verdict
		}
		if loggedOut != nil {
			h.Problems = append([]folder.Problem{*loggedOut}, h.Problems...)
		}
	}
	var server *compare.Report
	var cmpErr error
	if o.server && loggedOut == nil {
		server, cmpErr = compareWithServer(ctx, d, o, dir, h)
	}
	free := freeSpace(f.Dir)
	code := verdictCode(h.Problems)
	if o.json {
		writeStatusJSON(d, f.Dir, h, session, free, code, server)
	} else {
		writeStatus(d.stdout, f.Dir, h, session, free, now(), server)
	}
	if cmpErr != nil {
		return cmpErr // the verdict without the server's side is not the one asked for
	}
	if code == exitOK {
		return nil
	}
	msgs := make([]string, 0, len(h.Problems))
	for _, p := range h.Problems {
		msgs = append(msgs, p.Msg)
	}
	se := &statusError{code: code, msg: "backup not healthy: " + strings.Join(msgs, "; "), inJSON: o.json}
	switch {
	case code == exitLogin && f.HasLink():
		se.hint = "ask the album's owner for a new link, then run `quak backup --link-file FILE " + dir + "`"
	case code == exitLogin && h.Last.Email != "":
		se.hint = (&loginError{email: h.Last.Email, endpoint: h.Last.Endpoint}).hint()
	}
	return se
}

// checkSession asks the server whether the stored session is accepted and
// belongs to the backup's account, and returns what to say of it and the
// problem it is, if any.
func checkSession(ctx context.Context, d deps, n *netFlags, dir, email string, last *folder.RunRecord) (string, *folder.Problem) {
	loggedOut := func(msg string) *folder.Problem { return &folder.Problem{Kind: folder.LoggedOut, Msg: msg} }
	a, c, err := loadSessionFor(d, n, dir, email)
	if errors.Is(err, errs.ErrNotLoggedIn) {
		return "not logged in", loggedOut("not logged in")
	}
	if err != nil {
		return "could not be checked: " + err.Error(), nil
	}
	if a.UserID != last.UserID {
		in := state.Account{UserID: a.UserID, Email: a.Email, Endpoint: a.Endpoint}
		of := state.Account{UserID: last.UserID, Email: last.Email, Endpoint: last.Endpoint}
		return "another account's", loggedOut(fmt.Sprintf("logged in as %s, but this is the backup of %s", in.Name(), of.Name()))
	}
	if _, err := c.SessionValidity(ctx); err != nil {
		if errors.Is(err, errs.ErrNotLoggedIn) {
			return "rejected by the server", loggedOut("the server rejects the session")
		}
		return "could not be checked: " + err.Error(), nil
	}
	return "valid", nil
}

func writeStatus(w io.Writer, dir string, h *folder.Health, session string, free int64, now time.Time, server *compare.Report) {
	last, c := h.Last, h.Last.Counts
	sayf(w, "Backup:        %s\n", dir)
	if last.Email == "" && last.UserID == 0 {
		sayf(w, "Account:       none: a public link's album, on %s\n", last.Endpoint)
	} else {
		sayf(w, "Account:       %s (user %d) on %s\n", last.Email, last.UserID, last.Endpoint)
	}
	sayf(w, "Session:       %s\n", session)
	sayf(w, "Last run:      %s to %s (%s ago), %s: %d new, %d linked, %s, %d failed, %d deleted on server (exit code %d)\n",
		last.Start.Format(time.RFC3339), last.End.Format(time.RFC3339), folder.Ago(now.Sub(last.End)), last.Outcome,
		c.New, c.Linked, plural(c.Metadata, "metadata update"), c.Failed, c.DeletedOnServer, last.ExitCode)
	if h.Success != nil {
		sayf(w, "Last success:  %s, %s ago\n", h.Success.End.Format(time.RFC3339), folder.Ago(now.Sub(h.Success.End)))
	} else {
		fmt.Fprintln(w, "Last success:  never")
	}
	sayf(w, "In the backup: %s, %s\n", plural(last.TotalFiles, "file"), humanBytes(last.TotalBytes))
	if free >= 0 {
		sayf(w, "Free space:    %s\n", humanBytes(free))
	}
	sayf(w, "Metadata:      %s\n", viewsText(h.Views))
	writeFailing(w, last)
	writeDamaged(w, h.Damaged)
	if server != nil {
		writeServer(w, server)
	}
	if len(h.Problems) == 0 {
		fmt.Fprintln(w, "Status:        healthy")
		return
	}
	for _, p := range h.Problems {
		sayf(w, "Problem:       %s\n", p.Msg)
	}
}

// writeFailing lists the files the last run could not save, 20 at most.
func writeFailing(w io.Writer, last *folder.RunRecord) {
	if len(last.Failures) == 0 {
		return
	}
	sayf(w, "Failing:       %s\n", plural(last.Counts.Failed, "file"))
	for i, f := range last.Failures {
		if i == 20 {
			sayf(w, "  … and %d more (quak status --json lists them)\n", len(last.Failures)-i)
			break
		}
		sayf(w, "  file %d, %s / %s: %s: %s\n", f.FileID, f.Album, orUnknown(f.Title), f.Reason, f.Error)
	}
}

// writeDamaged lists the files the last verify found missing or changed
// and no backup has downloaded again, 20 at most.
func writeDamaged(w io.Writer, damaged []folder.Damage) {
	if len(damaged) == 0 {
		return
	}
	sayf(w, "Damaged:       %s missing or changed, found by quak verify\n", plural(len(damaged), "file"))
	for i, d := range damaged {
		if i == 20 {
			sayf(w, "  … and %d more (quak status --json lists them)\n", len(damaged)-i)
			break
		}
		sayf(w, "  file %d, %s: %s\n", d.FileID, d.Path, d.Kind)
	}
}

func writeStatusJSON(d deps, dir string, h *folder.Health, session string, free int64, code int, server *compare.Report) {
	last := h.Last
	msgs := make([]string, 0, len(h.Problems))
	for _, p := range h.Problems {
		msgs = append(msgs, p.Msg)
	}
	var lastSuccess any
	if h.Success != nil {
		lastSuccess = h.Success.End.Format(time.RFC3339)
	}
	failures := last.Failures
	if failures == nil {
		failures = []folder.Failure{}
	}
	damaged := append([]folder.Damage{}, h.Damaged...)
	var onServer any
	if server != nil {
		onServer = serverJSON(server)
	}
	newJSONLines(d).write("status", map[string]any{
		"dir": dir, "email": last.Email, "userID": last.UserID, "endpoint": last.Endpoint, "session": session,
		"lastRun": map[string]any{
			"start": last.Start.Format(time.RFC3339), "end": last.End.Format(time.RFC3339), "outcome": last.Outcome,
			"exitCode": last.ExitCode, "counts": last.Counts,
		},
		"lastSuccess": lastSuccess, "failures": failures, "totalFiles": last.TotalFiles, "totalBytes": last.TotalBytes,
		"freeBytes": free, "healthy": code == exitOK, "problems": msgs, "exitCode": code, "views": viewsJSON(h.Views),
		"damaged": damaged, "server": onServer,
	})
}
