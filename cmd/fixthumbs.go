package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

type fixThumbsOpts struct {
	net         netFlags
	dryRun      bool
	limit       int
	from        string
	albums      []string
	exclude     []string
	json        bool
	concurrency int
	attempts    int
	account     string
	content     bool
	recheckWait time.Duration
	ids         []int64
}

// fixThumbsLong is the helper's --help text, before its exit codes.
const fixThumbsLong = `Check the thumbnail of every file your account owns and repair the ones
the server has lost (its bytes are gone: two 404s in a row, not one) or that
are damaged (they do not decrypt, or are not an image): quak makes a new one
from the original, as Ente's apps do (JPEG, longer side 720 px at quality 70
to 50, then smaller sizes down to 256 px before a lower quality), fits it
within the size the server records for the thumbnail it replaces (the server
refuses a larger one, and that size is learned before anything is sent),
encrypts it with the file's key, uploads it, commits it once, and reads it
back before calling it repaired.

With --check-content it also compares every thumbnail that decrypts with its
original and repairs those that show the wrong picture: blank (one colour),
garbled (noise, or partly flat grey), turned (rotated or mirrored) or
wrong-picture (clearly unlike the original: another photo, even one of the
same layout, or the picture cropped or in other tones). A flagged thumbnail
is replaced only when quak's new one is at most half as far from the
original; for videos only blank and garbled are judged. Ente's apps cache
thumbnails: a device may show the old one until its cache is cleared.

This changes your account: Ente's apps on other devices fetch the new
thumbnails. Run with --dry-run first to see what would change; --ids limits a
run to a few files.

It never touches:
  - files others shared with you (only their owner can; counted once),
  - thumbnails the server has no record of (no-record: the server would
    refuse the update), and Ente's deliberate black placeholders,
  - thumbnails it could not check (unknown: errors or rate limits that
    outlasted the retries, a body cut on the way twice); a flaky network
    never counts as "missing".

A thumbnail counts as lost only when the object store answers 404 twice,
the second time after a wait. When more than half of the thumbnails checked
(at least 4) look lost at once, the object store itself looks unavailable:
nothing is repaired and the run exits 75.

Originals are downloaded and checked against Ente's hash, or, with --from,
taken from a quak backup folder where their hash still matches; one without
a hash is never used. JPEG, PNG, GIF and WebP are read by quak itself; HEIC
needs libheif's heif-dec (or heif-convert) and videos need ffmpeg on PATH
(and ffprobe to tone-map HDR), else they are reported unsupported.

`

func newFixThumbnailsCmd(d deps) *cobra.Command {
	o := &fixThumbsOpts{}
	c := &cobra.Command{
		Use:   "fix-missing-thumbnails",
		Short: "Find thumbnails Ente has lost or damaged and make them again",
		Long: fixThumbsLong + exitHelp(map[int]string{
			exitOK: "every owned file is ok or repaired (or beyond repair by design)",
			exitPartial: "some file is unknown, too large to fit, unsupported, kept or failed, " +
				"or an --ids id is not one of your files",
			exitLocked: "--from's backup folder is in use by a running backup",
			exitTempFail: "the object store looks unavailable (most thumbnails look lost at once): " +
				"nothing was repaired; run again later",
			exitFatal: "", exitLogin: "", exitUsage: albumsUsageHelp,
		}),
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runFixThumbnails(c.Context(), d, o) },
	}
	o.register(c.Flags())
	return c
}

func runFixThumbnails(ctx context.Context, d deps, o *fixThumbsOpts) error {
	for _, id := range o.ids {
		if id <= 0 {
			return &usageError{fmt.Errorf("--ids takes file ids, positive numbers: %d", id)}
		}
	}
	if err := firstError(atLeast("concurrency", o.concurrency, 1), atLeast("attempts", o.attempts, 1),
		atLeast("limit", o.limit, 0)); err != nil {
		return err
	}
	albums := filter.Albums{Include: o.albums, Exclude: o.exclude}
	if err := albums.Validate(); err != nil {
		return &usageError{err}
	}
	if o.from != "" {
		if err := needFolder(o.from); err != nil {
			return err
		}
	}
	a, c, err := loadSessionFor(d, &o.net, o.from, o.account)
	if err != nil {
		return err
	}
	p := retryPolicy(d, o.attempts)
	tp := &thumbPrinter{d: d}
	if o.json {
		tp.json = newJSONLines(d)
	}
	p.OnRetry = tp.retry
	sum, err := thumbnails.Run(ctx, thumbnails.Options{
		Client:       c,
		Keys:         catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey},
		Policy:       p,
		Concurrency:  o.concurrency,
		DryRun:       o.dryRun,
		Limit:        o.limit,
		Albums:       albums,
		FromDir:      o.from,
		IDs:          o.ids,
		CheckContent: o.content,
		RecheckWait:  o.recheckWait,
		Events:       tp.event,
		Listed:       tp.listed,
	})
	tp.finish()
	if err != nil {
		return err
	}
	tp.summary(sum, o.dryRun)
	if !sum.Healthy() {
		return &problemsError{fmt.Sprintf("%s needing attention (unknown, too large, unsupported or failed) and %s that could not be listed",
			plural(len(sum.Problems), "file"), plural(sum.AlbumsFailed, "album"))}
	}
	return nil
}

// thumbPrinter shows the helper's events: a line on stderr for every file
// that is not simply ok, and the summary on stdout; with --json, JSON
// lines on stdout instead of the summary line.
type thumbPrinter struct {
	d    deps
	json *jsonLines
	bar  *bar // nil unless on a terminal
}

// listed starts the progress bar on a terminal, once the files are known.
func (tp *thumbPrinter) listed(n int) {
	if !tp.d.stderrIsTerminal {
		return
	}
	tp.bar = newBar(tp.d.stderr, int64(n), "checking thumbnails", progressbar.OptionSetRenderBlankState(true))
}

func (tp *thumbPrinter) finish() {
	tp.bar.finish()
}

func (tp *thumbPrinter) retry(err error, attempt int, delay time.Duration) {
	if tp.json != nil {
		tp.json.write("retry", map[string]any{"attempt": attempt, "delay": delay.Seconds(), "cause": err.Error()})
	}
	tp.bar.above(tp.d.stderr, shownf("quak: attempt %d failed, retrying in %s: %v", attempt, delay.Round(100*time.Millisecond), err))
}

func (tp *thumbPrinter) event(e thumbnails.Event) {
	if tp.json != nil {
		tp.json.write("thumbnail", map[string]any{
			"fileID": e.FileID, "album": e.Album, "title": e.Title, "class": string(e.Class),
			"action": string(e.Action), "error": errText(e.Err), "recordedSize": e.Budget, "newSize": e.Size,
		})
	}
	if e.FileID == 0 {
		tp.bar.above(tp.d.stderr, shownf("quak: %v", e.Err))
		return
	}
	defer tp.bar.add(1)
	if e.Action == thumbnails.None {
		return
	}
	line := shownf("quak: %s, %s: %s / %s (file %d)", string(e.Class), string(e.Action), e.Album, orUnknown(e.Title), e.FileID)
	if e.Size > 0 {
		line += fmt.Sprintf(", %d of %d bytes", e.Size, e.Budget)
	}
	if e.Err != nil {
		line += ": " + shown(e.Err.Error())
	}
	tp.bar.above(tp.d.stderr, line)
}

// thumbClasses and thumbActions fix the order counts are printed in.
var (
	thumbClasses = []thumbnails.Class{thumbnails.OK, thumbnails.Lost, thumbnails.Corrupt, thumbnails.Blank,
		thumbnails.Garbled, thumbnails.Turned, thumbnails.WrongPicture, thumbnails.NoRecord,
		thumbnails.Placeholder, thumbnails.Unknown}
	thumbActions = []thumbnails.Action{thumbnails.Repaired, thumbnails.WouldRepair, thumbnails.TooLarge,
		thumbnails.Unsupported, thumbnails.Failed, thumbnails.Kept, thumbnails.Skipped}
)

func (tp *thumbPrinter) summary(s *thumbnails.Summary, dryRun bool) {
	if tp.json != nil {
		classes, actions := map[string]int{}, map[string]int{}
		for k, v := range s.Classes {
			classes[string(k)] = v
		}
		for k, v := range s.Actions {
			actions[string(k)] = v
		}
		problems := append([]int64{}, s.Problems...)
		tp.json.write("summary", map[string]any{
			"owned": s.Owned, "sharedIn": s.SharedIn, "albumsFailed": s.AlbumsFailed, "classes": classes,
			"actions": actions, "problems": problems, "dryRun": dryRun, "healthy": s.Healthy(),
			"duration": s.Duration.Seconds(), "exitCode": thumbExitCode(s),
		})
		return
	}
	writeThumbSummary(tp.d.stdout, s, dryRun)
}

func thumbExitCode(s *thumbnails.Summary) int {
	if s.Healthy() {
		return exitOK
	}
	return exitPartial
}

func writeThumbSummary(w io.Writer, s *thumbnails.Summary, dryRun bool) {
	var parts []string
	for _, c := range thumbClasses {
		if n := s.Classes[c]; n > 0 || c == thumbnails.OK {
			parts = append(parts, fmt.Sprintf("%d %s", n, c))
		}
	}
	fmt.Fprintf(w, "%s checked: %s", plural(s.Owned, "owned file"), strings.Join(parts, ", "))
	parts = parts[:0]
	for _, a := range thumbActions {
		if n := s.Actions[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, a))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "; %s", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "; in %s\n", s.Duration.Round(time.Millisecond))
	if s.SharedIn > 0 {
		fmt.Fprintf(w, "%s shared with you by others not checked: only their owners can repair them.\n", plural(s.SharedIn, "file"))
	}
	if dryRun && s.Actions[thumbnails.WouldRepair] > 0 {
		fmt.Fprintln(w, "Dry run: nothing was uploaded. Run again without --dry-run to repair.")
	}
	if n := s.Actions[thumbnails.Skipped]; n > 0 {
		fmt.Fprintf(w, "%s left by --limit; run again to repair them.\n", plural(n, "repairable file"))
	}
	if len(s.Problems) > 0 {
		ids := make([]string, 0, len(s.Problems))
		for _, id := range s.Problems {
			ids = append(ids, fmt.Sprint(id))
		}
		fmt.Fprintf(w, "Needing attention: %s\n", strings.Join(ids, " "))
	}
}

// problemsError is a run that finished but left files needing attention.
type problemsError struct{ msg string }

func (e *problemsError) Error() string { return e.msg }

// register declares the helper's flags into o.
func (o *fixThumbsOpts) register(f *pflag.FlagSet) {
	f.BoolVar(&o.dryRun, "dry-run", false, "find and regenerate, but upload nothing")
	f.BoolVar(&o.content, "check-content", false, "also compare every thumbnail with its original and repair the ones showing the wrong picture")
	f.Int64SliceVar(&o.ids, "ids", nil, "only these files (ids, comma-separated)")
	f.IntVar(&o.limit, "limit", 0, "repair at most N files this run (0: no limit)")
	f.StringVar(&o.from, "from", "", "take originals from this quak backup folder when their hash matches")
	f.DurationVar(&o.recheckWait, "recheck-wait", thumbnails.LossRecheckWait, "wait this long before looking again at a thumbnail the object store answered 404 for")
	_ = f.MarkHidden("recheck-wait")
	f.StringArrayVar(&o.albums, "albums", nil, "only files in these albums (name glob or id; repeatable)")
	f.StringArrayVar(&o.exclude, "exclude-albums", nil, "skip files in these albums (name glob or id; repeatable)")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout: one object per file, then a summary")
	f.IntVar(&o.concurrency, "concurrency", 4, "files checked and repaired at once")
	f.IntVar(&o.attempts, "attempts", retry.Default().MaxAttempts, "attempts per request before a file counts as unknown")
	f.StringVar(&o.account, "account", "", "the account (email) to repair, when several are logged in (default: --from's account)")
	o.net.register(f)
}
