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
			if o.multi.all {
				return runOnAll(c.Context(), d, &o.multi, o.json, func(d deps, dir string) error {
					return runVerify(c.Context(), d, o, dir)
				})
			}
			return runVerify(c.Context(), d, o, args[0])
		},
	}
	f := c.Flags()
	f.Float64Var(&o.sample, "sample", 100, "check this percentage of files, least recently verified first")
	f.IntVar(&o.concurrency, "concurrency", max(1, runtime.NumCPU()), "files to read and hash at once (at least 1)")
	f.StringArrayVar(&o.ignore, "ignore", nil, "never call files with names matching this glob extra (repeatable; .DS_Store, Thumbs.db, desktop.ini, ._* and *.xmp always are)")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout: one per problem, then a summary")
	f.BoolVar(&o.multi.all, "all", false, "verify every backup folder recorded in the config, one after another")
	return c
}

func runVerify(ctx context.Context, d deps, o *verifyOpts, dir string) error {
	if o.sample <= 0 || o.sample > 100 {
		return &usageError{fmt.Errorf("--sample must be above 0 and at most 100")}
	}
	if o.concurrency < 1 {
		return &usageError{fmt.Errorf("--concurrency must be at least 1")}
	}
	var jl *jsonLines
	if o.json {
		jl = newJSONLines(d)
	}
	if err := verify.ValidIgnore(o.ignore); err != nil {
		return &usageError{err}
	}
	if err := needFolder(dir); err != nil {
		return err // a disk that did not mount, named as such
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
		return err
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
			"exitCode": code})
	} else {
		var parts []string
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Problems[k], k))
		}
		fmt.Fprintf(d.stdout, "%d of %s checked (%s read): %s; in %s\n", sum.Checked, plural(sum.Total, "file"),
			humanBytes(sum.Bytes), strings.Join(parts, ", "), sum.Duration.Round(time.Millisecond))
		if len(sum.Redownload) > 0 {
			sayf(d.stdout, "Run quak backup --verify %s to download the missing, changed and mismatched files again.\n", dir)
		}
	}
	if !sum.OK() {
		n := 0
		for _, k := range kinds {
			n += sum.Problems[k]
		}
		return &problemsError{plural(n, "problem") + " found in the backup"}
	}
	return nil
}
