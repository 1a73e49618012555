package cmd

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/download/verify"
)

type verifyOpts struct {
	ignore      []string
	sample      float64
	concurrency int
	json        bool
	multi       multiFlags
	healthURL   string
	healthFile  string
}

func newVerifyCmd(d deps) *cobra.Command {
	o := &verifyOpts{}
	c := &cobra.Command{
		Use:   "verify DIR",
		Short: "Re-hash the backup in DIR and report what is missing, changed or extra",
		Long: `Read every saved file in DIR again and check it against the BLAKE2b-512
hash recorded when quak wrote it (Ente's own content hash). Reports files
that are missing, changed (bit rot, edits), extra files in album folders that
quak did not save (not the files systems and photo managers drop there:
.DS_Store, Thumbs.db, desktop.ini, ._*, *.xmp; --ignore GLOB adds more), and album copies that are no longer hard links to each
other. Nothing is changed; quak backup --verify downloads again what is
missing or changed.

--sample 10 checks the 10% of files verified least recently (never-checked
files first) and remembers when each was checked, so a nightly run covers
the whole backup every ten days. It needs no network and no login. It
reads --concurrency files at once (default: one per CPU), each through a
fixed 1 MiB buffer whatever its size; what it reports, and in what order,
is the same for every --concurrency.

--all verifies every folder recorded by quak backup, one after another.

` + exitHelp(map[int]string{
			exitOK:          "everything checked is as it was written",
			exitPartial:     "something is missing, changed, extra, unlinked or mismatched",
			exitLocked:      "a backup is running in DIR (verify waits for nothing)",
			exitUnusableDir: "DIR holds no quak backup",
			exitFatal:       "", exitUsage: "",
		}) + "\n\n" + allOrderText(),
		Args: o.multi.args("verify"),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			if err := o.check(); err != nil {
				return err
			}
			ping, err := verifyPinger(d, o)
			if err != nil {
				return err
			}
			ping.start(ctx)
			summary := ""
			if o.multi.all {
				err = runOnAll(ctx, d, &o.multi, o.json, func(d deps, dir string) error {
					_, err := runVerify(ctx, d, o, dir)
					return err
				})
			} else {
				summary, err = runVerify(ctx, d, o, args[0])
			}
			code := d.stopped(exitCodeFor(err))
			body := outcomeFirst(code) + summary
			if err != nil {
				body += "\nerror: " + err.Error()
			}
			ping.finish(ctx, code, strings.TrimSpace(body))
			return err
		},
	}
	f := c.Flags()
	f.Float64Var(&o.sample, "sample", 100, "check this percentage of files, least recently verified first")
	f.IntVar(&o.concurrency, "concurrency", max(1, runtime.NumCPU()), "files to read and hash at once (at least 1)")
	f.StringArrayVar(&o.ignore, "ignore", nil, "never call files with names matching this glob extra (repeatable; .DS_Store, Thumbs.db, desktop.ini, ._* and *.xmp always are)")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout: one per problem, then a summary")
	f.BoolVar(&o.multi.all, "all", false, "verify every backup folder recorded in the config, one after another (one health-check ping for them all)")
	registerPing(f, &o.healthURL, &o.healthFile)
	return c
}

// check refuses flags out of their range.
func (o *verifyOpts) check() error {
	if o.sample <= 0 || o.sample > 100 {
		return &usageError{fmt.Errorf("--sample must be above 0 and at most 100")}
	}
	if o.concurrency < 1 {
		return &usageError{fmt.Errorf("--concurrency must be at least 1")}
	}
	if err := verify.ValidIgnore(o.ignore); err != nil {
		return &usageError{err}
	}
	return nil
}

// verifyPinger pings the health check for a verify, as for a backup (the
// same flags and variables), once for --all.
func verifyPinger(d deps, o *verifyOpts) (*pinger, error) {
	url, err := healthURL(d, o.healthURL, o.healthFile)
	if err != nil {
		return nil, err
	}
	return stderrPinger(d, url)
}

// runVerify verifies dir and returns its summary line.
func runVerify(ctx context.Context, d deps, o *verifyOpts, dir string) (string, error) {
	var jl *jsonLines
	if o.json {
		jl = newJSONLines(d)
	}
	if err := needFolder(dir); err != nil {
		return "", err // a disk that did not mount, named as such
	}
	sum, err := verify.Run(ctx, verify.Options{Dir: dir, Sample: o.sample, Concurrency: o.concurrency, Now: d.now, Ignore: o.ignore, Events: func(p verify.Problem) {
		if jl != nil {
			jl.write("problem", map[string]any{"kind": string(p.Kind), "fileID": p.FileID, "path": p.Path, "detail": p.Detail})
		}
		line := shownf("quak: %s: %s", string(p.Kind), p.Path)
		if p.Detail != "" {
			line += shownf(" (%s)", p.Detail)
		}
		fmt.Fprintln(d.stderr, line)
	}})
	if err != nil {
		return "", err
	}
	if sum.Unrecorded != nil {
		sayf(d.stderr, "quak: warning: quak status will not know what this verify found: %s\n", sum.Unrecorded)
	}
	if sum.ReadOnly && !d.g.quiet {
		sayf(d.stderr, "quak: %s cannot be written: verified without its lock, and neither when each file was checked nor what was found is recorded (quak status will not know)\n", dir)
	}
	kinds := []verify.Kind{verify.Missing, verify.Changed, verify.Extra, verify.Unlinked, verify.Mismatch}
	if jl != nil {
		counts := map[string]int{}
		for _, k := range kinds {
			counts[string(k)] = sum.Problems[k]
		}
		code := exitOK
		if !sum.OK() {
			code = exitPartial
		}
		jl.write("summary", map[string]any{"total": sum.Total, "checked": sum.Checked, "bytes": sum.Bytes,
			"problems": counts, "redownload": append([]int64{}, sum.Redownload...), "duration": sum.Duration.Seconds(),
			"readOnly": sum.ReadOnly, "exitCode": code})
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", sum.Problems[k], k))
	}
	line := fmt.Sprintf("%d of %s checked (%s read): %s; in %s", sum.Checked, plural(sum.Total, "file"),
		humanBytes(sum.Bytes), strings.Join(parts, ", "), sum.Duration.Round(time.Millisecond))
	if jl == nil {
		fmt.Fprintln(d.stdout, line)
		if sum.Problems[verify.Missing]+sum.Problems[verify.Changed] > 0 && !sum.ReadOnly {
			sayf(d.stdout, "quak status reports the missing and changed files until the next quak backup %s downloads them again.\n", dir)
		}
		if sum.Problems[verify.Mismatch] > 0 {
			sayf(d.stdout, "Run quak backup --verify %s to download the mismatched files again.\n", dir)
		}
	}
	if !sum.OK() {
		n := 0
		for _, k := range kinds {
			n += sum.Problems[k]
		}
		return line, &problemsError{plural(n, "problem") + " found in the backup"}
	}
	return line, nil
}
