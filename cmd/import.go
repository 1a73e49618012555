package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/restore"
	"github.com/quak-photos/quak/restore/takeout"
)

func newImportCmd(d deps) *cobra.Command {
	c := &cobra.Command{
		Use:   "import",
		Short: "Import photos from another service into the logged-in Ente account",
		Args:  noArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newImportTakeoutCmd(d))
	return c
}

type importOpts struct {
	account  string
	dryRun   bool
	json     bool
	attempts int
	parallel int
	partner  bool
	net      netFlags
}

func newImportTakeoutCmd(d deps) *cobra.Command {
	o := &importOpts{}
	c := &cobra.Command{
		Use:   "takeout PATH...",
		Short: "Import a Google Photos Takeout (its zip or tgz parts, or their folders) into the logged-in Ente account, each photo once",
		Long: `Import a Google Takeout of Google Photos into the Ente account you are
logged in to (with several, --account EMAIL says which). Give every part
at once: the takeout-*.zip or takeout-*.tgz files as Google made them, or
the folders they were unpacked into, or a mix. They are read where they
are: nothing is unpacked or copied, and a part's photo may find its
metadata JSON in another part.

Each photo and video comes once, whatever number of album folders and
year folders hold it, with the date, place and caption its JSON records
(for one without, the date in its Exif, its movie header or its name), in
every album that held it; favourites go to Ente's Favorites, archived
photos are archived, a live photo's image and video become one Ente live
photo, and a photo of Google's Locked Folder goes into Ente's hidden album
only. What is in Google's trash, and what a partner shared (unless
--include-partner), is left out. Photos only in year folders go to Ente's
Uncategorized.

--dry-run reads the Takeout and prints its report (per part: the photos,
how each found its JSON, those without or with two, what is left out and
why, the albums) and needs no login: nothing is sent.

What the account already has (the same content, type and name, from Ente's
phone app say) is added to the albums it is missing from, never uploaded
again. Every upload is recorded before it is sent, in quak's config folder
under import/, so an import is safe to interrupt, even killed: run it again
(with the same Takeout, or a later one that overlaps it) and it sends only
what is not there yet.

` + exitHelp(map[int]string{
			exitOK:          "everything imported (or, with --dry-run, read)",
			exitPartial:     "some files could not be imported (named on stderr; the next run retries them), or a part is damaged",
			exitLocked:      "another import into the same account is running",
			exitUnusableDir: "a PATH does not exist or is no Takeout part",
			exitFatal:       "the account is out of storage, or any other fatal error",
			exitLogin:       "", exitUsage: "", exitTempFail: "", exitInterrupt: "", exitTerminated: "",
		}),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{fmt.Errorf("import takeout takes the Takeout's parts (its zip or tgz files, or folders)")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runImportTakeout(c.Context(), d, o, args) },
	}
	f := c.Flags()
	f.StringVar(&o.account, "account", "", "import into this logged-in account (needed with several)")
	f.BoolVar(&o.dryRun, "dry-run", false, "read the Takeout and print its report; send nothing (no login needed)")
	f.BoolVar(&o.json, "json", false, "JSON lines on stdout: the report, one per event, then a summary")
	f.IntVar(&o.attempts, "attempts", 4, "tries per request before a file fails")
	f.IntVar(&o.parallel, "concurrency", importConcurrency, fmt.Sprintf("files to read and upload at once (1 to %d)", maxRestoreConcurrency))
	f.BoolVar(&o.partner, "include-partner", false, "also import the photos a partner account shared")
	o.net.register(f)
	return c
}

func runImportTakeout(ctx context.Context, d deps, o *importOpts, paths []string) error {
	if err := firstError(atLeast("attempts", o.attempts, 1), inRange("concurrency", o.parallel, 1, maxRestoreConcurrency)); err != nil {
		return err
	}
	out := newImportOutput(d, o)
	tk, err := takeout.Open(ctx, paths, takeout.Options{IncludePartner: o.partner, Now: d.now, Concurrency: o.parallel})
	if err != nil {
		out.finish(nil, "", err)
		return err
	}
	defer tk.Close()
	out.report(tk.Report)
	if o.dryRun {
		out.finish(&restore.Summary{Files: len(tk.Originals)}, "", nil)
		return damagedParts(tk.Report)
	}
	a, c, err := loadSessionOf(d, &o.net, o.account, "")
	if err != nil {
		out.finish(nil, "", err)
		return err
	}
	dir, err := configDir(d.getenv)
	if err != nil {
		return err
	}
	// The import holds what it reads within its own budget; a soft limit
	// keeps Go's collector from letting the garbage grow as far again.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(importHeap))
	out.start()
	sum, err := restore.Import(ctx, restore.ImportOptions{Policy: retryPolicy(d, o.attempts), Now: d.now, Concurrency: o.parallel,
		Journal: importJournal(dir, a.Endpoint, a.UserID),
		Target: restore.Target{Client: c, Email: a.Email, Endpoint: a.Endpoint,
			Keys: catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey}},
		Events: out.event}, tk.Albums, tk.Originals, tk)
	out.finish(sum, a.Email, err)
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return &problemsError{plural(sum.Failed, "file") + " could not be imported; the next run retries them"}
	}
	return damagedParts(tk.Report)
}

// damagedParts is the partial failure of a Takeout some of whose parts
// could not be read whole: what they hold whole was imported, the rest
// was not.
func damagedParts(r *takeout.Report) error {
	var names []string
	for _, p := range r.Parts {
		if p.Damaged != "" {
			names = append(names, p.Path)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &problemsError{fmt.Sprintf("%s could not be read whole (%s): download again what the report says is damaged",
		plural(len(names), "part"), strings.Join(names, ", "))}
}

// importConcurrency is --concurrency's default: on one shared 40 Mbit/s
// uplink 40 ms away, 8 kept an import of 1 MiB photos within 1.13 × the
// link's time where 4 took 1.37 × (docs/performance.md); the memory
// budget, not this, bounds what is held.
const importConcurrency = 8

// importHeap is the soft limit of the heap during an import.
const importHeap = 96 << 20

// importJournal is where the imports into one account keep their journal:
// in quak's config folder, by server and account, so that a later run
// finds it whatever disk the Takeout is on.
func importJournal(config, endpoint string, userID int64) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(endpoint, "/") + "\x00" + strconv.FormatInt(userID, 10)))
	return filepath.Join(config, "import", hex.EncodeToString(sum[:8]))
}

// importOutput shows an import: the Takeout's report, then a bar of bytes
// on a terminal, a line per decision with -v, JSON lines with --json.
type importOutput struct {
	mu  sync.Mutex
	d   deps
	o   *importOpts
	bar *bar
	jl  *jsonLines
}

func newImportOutput(d deps, o *importOpts) *importOutput {
	out := &importOutput{d: d, o: o}
	if o.json {
		out.jl = newJSONLines(d)
	}
	return out
}

// start draws the bar, once the report is printed.
func (out *importOutput) start() {
	if out.d.stderrIsTerminal && !out.d.g.quiet {
		out.bar = newByteBar(out.d.stderr, "importing")
	}
}

// report prints what the reading of the Takeout found: per part a line, the
// albums, and (with --dry-run or -v) each file it names.
func (out *importOutput) report(r *takeout.Report) {
	if out.jl != nil {
		for _, p := range r.Parts {
			out.jl.write("part", map[string]any{"path": p.Path, "kind": p.Kind, "damaged": p.Damaged, "media": p.Media,
				"json": p.JSON, "matched": p.Matched, "unmatched": p.Unmatched, "ambiguous": p.Ambiguous, "skipped": p.Skipped})
		}
		for _, a := range r.Albums {
			out.jl.write("album", map[string]any{"name": a.Name, "folder": a.Folder, "files": a.Files, "untitled": a.Untitled})
		}
		for _, n := range r.Notes {
			out.jl.write("note", map[string]any{"kind": n.Kind, "part": n.Part, "name": n.Name, "reason": n.Reason})
		}
		out.jl.write("takeout", map[string]any{"originals": r.Originals, "livePhotos": r.Live, "albums": len(r.Albums), "dropped": r.Dropped})
		return
	}
	if out.d.g.quiet {
		return
	}
	w := out.d.stdout
	sayf(w, "Takeout: %s in %s (%s), %s\n", photosAndVideos(r.Originals), plural(len(r.Parts), "part"),
		plural(r.Live, "live photo"), plural(len(r.Albums), "album"))
	for _, p := range r.Parts {
		sayf(w, "  %s\n", partLine(p))
	}
	if len(r.Albums) > 0 {
		var as []string
		for _, a := range r.Albums {
			as = append(as, fmt.Sprintf("%s (%d)", a.Name, a.Files))
		}
		sayf(w, "Albums: %s\n", strings.Join(as, ", "))
	}
	out.notes(r)
}

// partLine says what one part holds.
func partLine(p *takeout.PartReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", p.Path, photosAndVideos(p.Media))
	matched := 0
	var rules []string
	for rule, n := range p.Matched {
		matched += n
		rules = append(rules, fmt.Sprintf("%d %s", n, rule))
	}
	sort.Strings(rules)
	if matched > 0 {
		fmt.Fprintf(&b, ", %d with their JSON (%s)", matched, strings.Join(rules, ", "))
	}
	if p.Unmatched > 0 {
		fmt.Fprintf(&b, ", %d without JSON", p.Unmatched)
	}
	if p.Ambiguous > 0 {
		fmt.Fprintf(&b, ", %d with more than one", p.Ambiguous)
	}
	var skipped []string
	for why, n := range p.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(skipped)
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "; left out: %s", strings.Join(skipped, ", "))
	}
	if p.Damaged != "" {
		fmt.Fprintf(&b, "; DAMAGED: %s", p.Damaged)
	}
	return b.String()
}

// notes prints the files the report names: all of them with --dry-run or
// -v, else how many there are.
func (out *importOutput) notes(r *takeout.Report) {
	w := out.d.stderr
	if !out.o.dryRun && !out.d.g.verbose {
		if n := len(r.Notes); n > 0 {
			fmt.Fprintf(w, "quak: the report names %d files or folders (without JSON, left out, or looking incomplete): see them with --dry-run\n", n)
		}
		return
	}
	for _, n := range r.Notes {
		where := n.Name
		if n.Part != "" {
			where = n.Part + ": " + n.Name
		}
		sayf(w, "quak: %s: %s: %s\n", n.Kind, where, n.Reason)
	}
	for kind, n := range r.Dropped {
		sayf(w, "quak: %s: %d more not named\n", kind, n)
	}
}

// importVerbs say what each event did.
var importVerbs = map[restore.Kind]string{
	restore.AlbumCreated: "created album",
	restore.Uploaded:     "uploaded",
	restore.Present:      "already there",
	restore.Added:        "added to",
	restore.Placeholder:  "placeholder thumbnail for",
	restore.Failed:       "failed",
	restore.Restarted:    "starting again",
}

func (out *importOutput) event(e restore.Event) {
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.jl != nil {
		fields := map[string]any{"title": e.Title, "where": e.Where, "album": e.Album, "bytes": e.Bytes, "error": errText(e.Err)}
		if e.Kind == restore.Waiting {
			fields = map[string]any{"seconds": e.Wait.Seconds(), "error": errText(e.Err)}
		}
		out.jl.write(string(e.Kind), fields)
	}
	if e.Kind == restore.Uploaded {
		out.bar.add(e.Bytes)
	}
	what := e.Title
	if e.Where != "" {
		what = e.Where
	}
	switch {
	case e.Kind == restore.Failed:
		out.bar.above(out.d.stderr, shownf("quak: failed: %s: %v", what, e.Err))
	case e.Kind == restore.Placeholder && out.d.g.verbose:
		out.bar.above(out.d.stderr, shownf("quak: placeholder thumbnail for %s: %v", what, e.Err))
	case e.Kind == restore.Waiting && !out.d.g.quiet:
		out.bar.above(out.d.stderr, fmt.Sprintf("quak: the server takes no more upload URLs for now (its limit a minute); waiting, asking again every %s", e.Wait.Round(time.Second)))
	case e.Kind == restore.Restarted && out.d.g.verbose:
		out.bar.above(out.d.stderr, shownf("starting again %s: %v", what, e.Err))
	case e.Kind == restore.Waiting, e.Kind == restore.Restarted:
	case out.d.g.verbose:
		switch e.Kind {
		case restore.AlbumCreated:
			what = e.Album
		case restore.Added:
			what = e.Title + " → " + e.Album
		}
		out.bar.above(out.d.stderr, importVerbs[e.Kind]+" "+shown(what))
	}
}

// finish prints the summary: a line on stdout (none with -q), or the
// JSON summary.
func (out *importOutput) finish(s *restore.Summary, email string, err error) {
	out.bar.finish()
	if s == nil {
		s = &restore.Summary{}
	}
	if out.jl != nil {
		code := exitCodeFor(err)
		if err == nil && s.Failed > 0 {
			code = exitPartial
		}
		out.jl.write("summary", map[string]any{"account": email, "dryRun": out.o.dryRun, "files": s.Files,
			"uploaded": s.Uploaded, "present": s.Present, "added": s.Added, "albumsCreated": s.AlbumsCreated,
			"bytes": s.Bytes, "failed": s.Failed, "placeholders": s.Placeholders, "error": errText(err), "exitCode": code})
		return
	}
	if out.d.g.quiet || err != nil && s.Files == 0 || out.o.dryRun {
		return
	}
	sayf(out.d.stdout, "%s uploaded to %s (%s), %s; %s failed\n",
		ofFiles(s.Uploaded, s.Files), email, humanBytes(s.Bytes), albumWork(s), counted(s.Failed))
}

func photosAndVideos(n int) string {
	if n == 1 {
		return "1 photo or video"
	}
	return fmt.Sprintf("%d photos and videos", n)
}
