// Package backup brings a local folder up to date with everything an Ente
// account can see: each new file downloaded once, decrypted and verified as
// it streams, and only then given its final name; albums as folders, other
// album entries as hard links, metadata edits applied without downloading,
// and every step recorded so an interrupted run resumes.
package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/download/rate"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// Options configure a run.
type Options struct {
	Dir      string
	Client   *apiclient.Client // authenticated
	Keys     catalog.Keys
	Email    string
	Endpoint string
	Policy   retry.Policy
	// Concurrency fixes how many files download at once; 0 finds it from
	// the link (package pace): from 4, growing while throughput rises and
	// latency stays flat, halved on 429 or 503, at most MaxConcurrency
	// (0: pace.DefaultMax).
	Concurrency    int
	MaxConcurrency int
	// Streams is how many ranges of one large file download at once (0:
	// download.DefaultStreams; 1: one stream), for files of more than
	// StreamAbove ciphertext bytes (0: download.DefaultStreamAbove).
	Streams     int
	StreamAbove int64
	// BandwidthLimit caps the bytes a second of all downloads together,
	// by local time of day and week (zero: none).
	BandwidthLimit rate.Schedule
	// PaceClock is the clock the adaptive number of downloads is measured
	// with (default time.Now).
	PaceClock func() time.Time
	// Events, if set, hears of everything the run does. Calls come from
	// several goroutines but never at the same time.
	Events func(Event)
	// FileMode is given to saved files (default 0644); cmd passes 0666
	// less the process umask, as any other program's files would get.
	FileMode os.FileMode
	// Record, if set, is called when a started run ends, even with an
	// error, while the folder is still locked. What it returns is the
	// folder's record of the run, and also of its last success when
	// succeeded is true.
	Record func(s *Summary, err error) (rec *folder.RunRecord, succeeded bool)
	// Filter narrows what is downloaded (albums, types, dates); the zero
	// value takes everything. Skipped files are remembered, so widening it
	// later fetches them without listing the library again.
	Filter filter.Set
	// Init creates Dir when it is missing (quak backup --init); otherwise a
	// missing Dir is refused, so a disk that did not mount never fills the
	// root file system.
	Init bool
	// FreeSpace, if set, reports the bytes free on Dir's file system; the
	// run then lists what changed first and refuses to start downloading
	// when it needs more (plus SpaceMargin).
	FreeSpace func(dir string) (int64, error)
	// Prune moves what the server deleted to DIR/.quak/trash/<date>/, at
	// most MaxDelete album copies a run (0: DefaultMaxDelete).
	Prune     bool
	MaxDelete int
	// Now is the clock for trash folders (default time.Now).
	Now func() time.Time
	// DryRun decides and reports everything a real run would, writing
	// nothing in Dir: no file, no state change, no lock.
	DryRun bool
	// MetadataOnly refreshes every sidecar, album file, name and mtime from
	// a full listing, downloading nothing and leaving cursors where they are.
	MetadataOnly bool
	// ResumeAbove: a download of more than this many bytes keeps a resume
	// point in the state every ResumeAbove bytes, so a later run can take
	// it up after a crash or a dead link (0: DefaultResumeAbove; < 0: never).
	ResumeAbove int64
	// Redownload names saved files to download again before anything else
	// (quak verify found them missing or changed).
	Redownload []int64
	// Views are the sidecars and the date view kept for other photo tools.
	// A change from the folder's remembered views is applied to the whole
	// backup first, downloading nothing.
	Views Views
}

// ErrLocked reports that another quak run holds the folder's lock.
var ErrLocked = folder.ErrLocked

// DirError reports a backup folder quak cannot use.
type DirError = folder.DirError

// entryKey is a file's entry in an album.
type entryKey struct{ file, collection int64 }

type run struct {
	o       Options
	f       *folder.Folder
	dir     string
	tmp     string // DIR/.quak/tmp: every file being written
	st      *state.Store
	fetcher *download.Fetcher

	emitMu sync.Mutex
	mu     sync.Mutex // guards everything below
	sum    Summary
	colls  map[int64]*state.Collection
	// folders holds the names of album folders; names, per collection, the
	// names taken in that album's folder (built on first use).
	folders  *layout.Namer
	names    map[int64]*layout.Namer
	adopt    map[int64]map[int64][]string // collection → file id → names found in an existing export
	touched  map[int64]bool
	dirty    map[string]bool // folders whose new entries are not fsynced yet
	indexErr error
	indexed  bool
	vanished int // albums whose diff answered 404 though listed as live
	// tombstones are the albums this run's listing shows deleted; goneNow,
	// the album copies its diffs show deleted: what --prune may act on
	// without asking the server again.
	tombstones map[int64]bool
	goneNow    map[entryKey]bool
	// listed is the latest updationTime this run's listings showed for
	// each album entry (latestOnly).
	listed  map[entryKey]int64
	ov      overlay
	resumes map[int64]*download.ResumePoint // where earlier runs left large downloads
	// expected holds the hashes of files being downloaded, to recognise one
	// a killed run left at its final name; viewNamers the names taken in
	// each date folder; viewsFull is set while prepareViews converts every
	// file; viewChanges counts files whose views changed.
	expected    map[int64]string
	viewNamers  map[string]*layout.Namer
	viewsFull   bool
	enteConvert bool
	viewChanges int
	down        outage // connection failures in a row
	// restoring holds the saved files being downloaded again because they
	// were missing or changed on disk.
	restoring map[int64]bool
}

// Run backs up the account into o.Dir. The summary is returned even with an
// error. Errors: *DirError, ErrLocked, errs.ErrNotLoggedIn (the server
// rejected the session: the run stops at once), *UnreachableError (the
// server could not be reached: the run stops), context errors, and others;
// files that fail are not errors but are counted in Summary.Failed.
func Run(ctx context.Context, o Options) (_ *Summary, err error) {
	start := time.Now()
	if o.FileMode == 0 {
		o.FileMode = 0o644
	}
	if o.DryRun {
		o.Init = false
	}
	f, err := folder.Prepare(o.Dir, o.Init, o.DryRun)
	if err != nil {
		return &Summary{}, err
	}
	dir := f.Dir
	r := &run{o: o, f: f, dir: dir, tmp: f.Temp(), names: map[int64]*layout.Namer{}, adopt: map[int64]map[int64][]string{},
		touched: map[int64]bool{}, dirty: map[string]bool{}, expected: map[int64]string{},
		tombstones: map[int64]bool{}, goneNow: map[entryKey]bool{}, listed: map[entryKey]int64{},
		ov: overlay{files: map[string]bool{}, aliases: map[string]string{}}}
	if o.Client != nil {
		r.down.answers = func(ctx context.Context, rawURL string) bool {
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			return o.Client.Answers(ctx, rawURL)
		}
	}
	if o.DryRun {
		st, drop, err := f.CopyState()
		if err != nil {
			return &Summary{}, err
		}
		defer drop()
		r.st = st
	} else {
		unlock, err := f.Lock()
		if err != nil {
			return &Summary{}, err
		}
		defer unlock()
	}
	r.sum = Summary{Started: true, Start: start, Reasons: map[string]int{}}
	r.o.Filter = o.Filter.ForAccount(o.Keys.UserID)
	if r.o.MaxDelete <= 0 {
		r.o.MaxDelete = DefaultMaxDelete
	}
	if r.o.ResumeAbove == 0 {
		r.o.ResumeAbove = DefaultResumeAbove
	}
	if r.o.Now == nil {
		r.o.Now = time.Now
	}
	defer func() {
		r.sum.Duration = time.Since(start)
		if rerr := r.record(err); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if !o.DryRun {
		r.st, err = f.OpenState()
		if err != nil {
			return &r.sum, err
		}
		defer func() { _ = r.st.Close() }()
		if err := r.loadResumes(); err != nil {
			return &r.sum, err
		}
		keep := map[string]bool{}
		for _, rp := range r.resumes {
			keep[rp.Temp] = true
		}
		if n, err := download.RemoveLeftovers(r.tmp, keep); err != nil {
			return &r.sum, err
		} else if n > 0 {
			r.emit(Event{Kind: LeftoversRemoved, Files: n})
		}
	}
	if err := r.checkAccount(); err != nil {
		return &r.sum, err
	}
	if err := r.prepareViews(); err != nil {
		return &r.sum, err
	}
	if !o.MetadataOnly {
		gone, err := r.missingLocally()
		if err != nil {
			return &r.sum, err
		}
		r.o.Redownload = append(r.o.Redownload, gone...)
	}
	r.restoring = map[int64]bool{}
	for _, id := range r.o.Redownload {
		r.restoring[id] = true
	}
	if err := r.markForRedownload(ctx); err != nil {
		return &r.sum, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.fetcher = &download.Fetcher{Client: o.Client, Policy: r.policy(), TempFile: openTemp, OnBytes: func(n int64) {
		r.emit(Event{Kind: Progress, Bytes: n})
	}, Pace: r.pace(), Streams: o.Streams, StreamAbove: o.StreamAbove}
	if o.BandwidthLimit.Limits() {
		r.fetcher.Rate = rate.NewScheduled(o.BandwidthLimit, nil, nil)
	}
	if r.fetcher.Streams == 0 {
		r.fetcher.Streams = download.DefaultStreams
	}
	if r.o.ResumeAbove > 0 {
		r.fetcher.Save, r.fetcher.SaveAbove = r.saveResume, r.o.ResumeAbove
	}
	err = r.sync(ctx, cancel)
	var ue *UnreachableError
	if cause := context.Cause(ctx); errors.Is(cause, errs.ErrNotLoggedIn) || errors.As(cause, &ue) {
		err = cause
	}
	if err == nil && o.Prune {
		err = r.prune(ctx)
	}
	if err == nil {
		r.dropStaleResumes()
	}
	r.sum.Unchanged = r.unchanged()
	return &r.sum, err
}

// pace is the run's limit on downloads in flight.
func (r *run) pace() *pace.Limiter {
	if r.o.Concurrency > 0 {
		return pace.Fixed(r.o.Concurrency)
	}
	return pace.Adaptive(r.o.MaxConcurrency, r.o.PaceClock)
}

// workers is how many downloads of a page may be under way at once: the
// limiter's cap, which it gates.
func (r *run) workers() int {
	if r.fetcher == nil || r.fetcher.Pace == nil {
		return max(r.o.Concurrency, 1)
	}
	return r.fetcher.Pace.Max()
}

// openTemp creates a download's temp file; tests replace it to model a
// full disk.
var openTemp = func(dir string) (*os.File, error) { return os.CreateTemp(dir, durable.TempPrefix+"*") }

// record writes the folder's record of the run from o.Record.
func (r *run) record(runErr error) error {
	if r.o.Record == nil || r.dry() {
		return nil
	}
	rec, ok := r.o.Record(&r.sum, runErr)
	return r.f.WriteRun(rec, ok)
}

// policy reports retries as events.
func (r *run) policy() retry.Policy {
	p := r.o.Policy
	prev := p.OnRetry
	p.OnRetry = func(err error, attempt int, d time.Duration) {
		if prev != nil {
			prev(err, attempt, d)
		}
		r.emit(Event{Kind: Retrying, Err: err, Attempt: attempt, Delay: d})
	}
	return p
}

func (r *run) emit(e Event) {
	if r.o.Events == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.o.Events(e)
}

// checkAccount refuses a folder that backs up another account, or the same
// user id on another server.
func (r *run) checkAccount() error {
	a, err := r.st.Account()
	if err != nil {
		return err
	}
	if a != nil && a.UserID != r.o.Keys.UserID {
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of another account (%s, user %d)", a.Email, a.UserID)}
	}
	if a != nil && a.Endpoint != "" && r.o.Endpoint != "" && !account.SameEndpoint(a.Endpoint, r.o.Endpoint) {
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of an account on another server (%s)", a.Endpoint)}
	}
	return r.st.SetAccount(state.Account{UserID: r.o.Keys.UserID, Email: r.o.Email, Endpoint: r.o.Endpoint})
}

// unchanged counts saved files this run did not touch, and totals what
// the backup holds.
func (r *run) unchanged() int {
	n := 0
	_ = r.st.Briefs(func(b state.Brief) error {
		if b.Status == state.Skipped {
			r.sum.LeftOut++
		}
		if (b.Status == state.Saved || b.Status == state.HashMismatch) && b.Placed() {
			r.sum.TotalFiles++
			r.sum.TotalBytes += plainSize(b.Size)
			if !r.touched[b.ID] {
				n++
			}
		}
		return nil
	})
	return n
}

// writeJSON writes a sidecar or album_meta.json and remembers its folder.
func (r *run) writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return r.writeFile(path, append(b, '\n'))
}

// writeFile writes a file beside the originals (a sidecar) atomically and
// remembers its folder.
func (r *run) writeFile(path string, b []byte) error {
	if r.dry() {
		r.note(path, true)
		return nil
	}
	if err := r.mkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	if err := durable.WriteFile(r.tmp, path, b, 0o644); err != nil {
		return err
	}
	r.markDirty(filepath.Dir(path))
	return nil
}

// markDirty notes folders whose entries changed (a file renamed into them,
// a folder made in them), for the next commit to fsync before it records
// anything that depends on them.
func (r *run) markDirty(dirs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range dirs {
		r.dirty[d] = true
	}
}

// syncDir is durable.SyncDir; tests record what it syncs.
var syncDir = durable.SyncDir

// commit fsyncs the folders written since the last commit, then records
// files and the collection in one transaction: state never points at a
// name that a crash could still take back.
func (r *run) commit(files []*state.File, c *state.Collection) error {
	if err := r.applyViews(files, c); err != nil {
		return err
	}
	r.mu.Lock()
	dirs := r.dirty
	r.dirty = map[string]bool{}
	r.mu.Unlock()
	if r.dry() {
		dirs = nil
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("syncing a folder before recording what is in it (removed during the run?): %w", err)
		}
	}
	return r.st.Commit(files, c)
}

// fatal reports errors that stop the whole run: a dead session, a
// cancelled run, a server that cannot be reached, and a backup folder that
// is full or read-only (every further file would fail the same way).
func fatal(ctx context.Context, err error) bool {
	var de *DirError
	var ue *UnreachableError
	return errors.Is(err, errs.ErrNotLoggedIn) || ctx.Err() != nil || errors.As(err, &de) || errors.As(err, &ue)
}

// diskError turns a full or read-only file system into the *DirError that
// stops the run, and returns other errors as they are.
func (r *run) diskError(err error) error {
	var de *DirError
	if errors.As(err, &de) {
		return err // already says so: wrapping again would repeat it
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS} {
		if errors.Is(err, e) {
			return &DirError{Dir: r.o.Dir, Reason: "is full or read-only; the run stopped", Err: err}
		}
	}
	return err
}
