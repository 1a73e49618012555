// Package backup brings a local folder up to date with everything an Ente
// account can see: each new file downloaded once, decrypted and verified as
// it streams, and only then given its final name; albums as folders, other
// album entries as hard links, metadata edits applied without downloading,
// and every step recorded so an interrupted run resumes.
package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/download/rate"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// Options configure a run. The groups are embedded: o.Concurrency is
// o.Transfer.Concurrency.
type Options struct {
	Dir string
	Source
	Transfer
	Scope
	Pruning
	// Events, if set, hears of everything the run does. Calls come from
	// several goroutines but never at the same time.
	Events func(Event)
	// Record, if set, is called when a started run ends, even with an
	// error, while the folder is still locked. What it returns is the
	// folder's record of the run, and also of its last success when
	// succeeded is true.
	Record func(s *Summary, err error) (rec *folder.RunRecord, succeeded bool)
	// FileMode is given to saved files (default 0644); cmd passes 0666
	// less the process umask, as any other program's files would get.
	FileMode os.FileMode
	// Started, if set, is called once the folder is locked and known to
	// be Source's, before the run writes anything else; an error refuses
	// the run. cmd keeps a public link's secrets in the folder then.
	Started func() error
	// Views are the sidecars and the date view kept for other photo tools.
	// A change from the folder's remembered views is applied to the whole
	// backup first, downloading nothing.
	Views Views
}

// Source is what is backed up: an account (Client and Keys) or another
// Library, and who it is, which the folder records and checks.
type Source struct {
	Client   *apiclient.Client // authenticated
	Keys     catalog.Keys      // Keys.UserID names the source
	Email    string
	Endpoint string
	// Library, when set, is read instead of Client's account.
	Library Library
	// Link, for a LinkLibrary, is the id of the link's album: the folder
	// is then that link's backup, and no account's.
	Link int64
}

// Transfer is how files are fetched.
type Transfer struct {
	Policy retry.Policy
	// Concurrency fixes how many files download at once; 0 finds it from
	// the link (package pace): from 4, growing while throughput rises and
	// latency stays flat, halved on 429 or 503, at most MaxConcurrency
	// (0: pace.DefaultMax).
	Concurrency    int
	MaxConcurrency int
	// Streams is how many ranges of one large file download at once (0:
	// found from the link, at most download.DefaultStreams, see
	// pace.Ranges; 1: one stream), for files of more than StreamAbove
	// ciphertext bytes (0: download.DefaultStreamAbove).
	Streams     int
	StreamAbove int64
	// BandwidthLimit caps the bytes a second of all downloads together,
	// by local time of day and week (zero: none).
	BandwidthLimit rate.Schedule
	// PaceClock is the clock the adaptive number of downloads is measured
	// with (default time.Now).
	PaceClock func() time.Time
	// ResumeAbove: a download of more than this many bytes keeps a resume
	// point in the state every ResumeAbove bytes, so a later run can take
	// it up after a crash or a dead link (0: DefaultResumeAbove; < 0: never).
	ResumeAbove int64
}

// Scope is what a run does and where.
type Scope struct {
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
	// DryRun decides and reports everything a real run would, writing
	// nothing in Dir: no file, no state change, no lock.
	DryRun bool
	// AllowNested lets a first backup go into a folder inside another
	// backup or above one (refused otherwise: folder.NestedError).
	AllowNested bool
	// MetadataOnly refreshes every sidecar, album file, name and mtime from
	// a full listing, downloading nothing and leaving cursors where they are.
	MetadataOnly bool
	// Redownload names saved files to download again before anything else
	// (quak verify found them missing or changed).
	Redownload []int64
}

// Pruning is what the run does with what the server deleted.
type Pruning struct {
	// Prune moves what the server deleted to DIR/.quak/trash/<date>/, at
	// most MaxDelete album copies a run (0: DefaultMaxDelete).
	Prune     bool
	MaxDelete int
	// Now is the clock for trash folders (default time.Now).
	Now func() time.Time
}

// ErrLocked reports that another quak run holds the folder's lock.
var ErrLocked = folder.ErrLocked

// DirError reports a backup folder quak cannot use.
type DirError = folder.DirError

// run is one backup of the account into its folder: a pipeline of the
// collaborators that do the work.
type run struct {
	*job
	f       *folder.Folder
	losses  *losses
	lister  *lister
	pruner  *pruner
	resumes *resumer
	record  func(error) error // the folder's record of the run (none in a dry run)
}

// Run backs up the account into o.Dir. The summary is returned even with an
// error. Errors: *DirError, ErrLocked, errs.ErrNotLoggedIn (the server
// rejected the session: the run stops at once), *UnreachableError (the
// server could not be reached: the run stops), context errors, and others;
// files that fail are not errors but are counted in Summary.Failed.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	o.defaults()
	f, err := folder.Prepare(o.Dir, folder.Use{Init: o.Init, DryRun: o.DryRun, AllowNested: o.AllowNested})
	if err != nil {
		return &Summary{}, err
	}
	// A dry run takes no lock and works on a private copy of the state.
	var st *state.Store
	var release func()
	if o.DryRun {
		st, release, err = f.CopyState()
	} else {
		release, err = f.LockFor("backup")
	}
	if err != nil {
		return &Summary{}, err
	}
	defer release()
	return newRun(f, &o, start).run(ctx, st)
}

// defaults fills in what o leaves zero.
func (o *Options) defaults() {
	if o.FileMode == 0 {
		o.FileMode = 0o644
	}
	if o.DryRun {
		o.Init = false
	}
	o.Filter = o.Filter.ForAccount(o.Keys.UserID)
	if o.MaxDelete <= 0 {
		o.MaxDelete = DefaultMaxDelete
	}
	if o.ResumeAbove == 0 {
		o.ResumeAbove = DefaultResumeAbove
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Library == nil && o.Client != nil {
		o.Library = &AccountLibrary{Client: o.Client, Keys: o.Keys}
	}
}

// newRun wires the collaborators of a run.
func newRun(f *folder.Folder, o *Options, start time.Time) *run {
	j := &job{o: o, dir: f.Dir, tmp: f.Temp(), tally: newTally(o.Events, start), down: &outage{}}
	j.policy = eventPolicy(o.Policy, j.tally)
	if o.Library != nil {
		j.down.answers = func(ctx context.Context, rawURL string) bool {
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			return o.Library.Answers(ctx, rawURL)
		}
	}
	r := &run{job: j, f: f, losses: &losses{j}, pruner: &pruner{job: j, seen: newListing(), trash: f.Trash()}}
	j.views = &viewer{job: j, f: f, dates: &dateView{j}}
	j.placer = &placer{job: j, expected: map[int64]string{}, restoring: map[int64]bool{}, adopt: map[int64]map[int64][]string{}}
	r.lister = &lister{job: j, placer: j.placer, updater: &updater{job: j, placer: j.placer}, seen: r.pruner.seen}
	if o.DryRun {
		dry := newDryDisk()
		j.disk, j.placer.save = dry, j.placer.pretender(dry)
		r.record = func(error) error { return nil }
	} else {
		j.disk, j.placer.save = newRealDisk(f), j.placer.download
		r.record = r.recordRun
	}
	return r
}

// run is the pipeline: check the account and the date view's folder (a
// refusal is a run that never started), sweep what killed runs left, bring
// the views in line, find what went missing on disk, then list and
// download, prune, and count.
func (r *run) run(ctx context.Context, st *state.Store) (_ *Summary, err error) {
	defer func() {
		r.tally.count(func(s *Summary) { s.Duration = time.Since(s.Start) })
		if rerr := r.record(err); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if st == nil {
		if st, err = r.f.OpenState(); err != nil {
			return r.tally.summary(), err
		}
		defer func() { _ = st.Close() }()
	}
	r.st, r.names = st, newNames(st)
	if err := r.checkAccount(ctx); err != nil {
		return r.tally.summary(), err // refused: nothing written, nothing recorded but the refusal
	}
	if err := r.views.dates.check(); err != nil {
		return r.tally.summary(), err // refused as well
	}
	r.tally.count(func(s *Summary) { s.Started = true })
	for _, step := range []func(context.Context) error{r.sweep, r.prepareViews, r.findLosses} {
		if err := step(ctx); err != nil {
			return r.tally.summary(), err
		}
	}
	r.placer.fetcher = r.fetcher()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	err = stopCause(ctx, r.lister.sync(ctx, cancel))
	if err == nil && r.o.Prune {
		err = r.pruner.prune(ctx)
	}
	if err == nil {
		r.resumes.dropStale(r.tally.wasTouched)
	}
	r.tally.total(r.st)
	return r.tally.summary(), err
}

// stopCause is the error a run stops with: the cause that cancelled it
// when that is a dead session or an unreachable server, else err.
func stopCause(ctx context.Context, err error) error {
	var ue *UnreachableError
	if cause := context.Cause(ctx); errors.Is(cause, errs.ErrNotLoggedIn) || errors.As(cause, &ue) {
		return cause
	}
	return err
}

// sweep loads where earlier runs left large downloads, and empties the
// temp area of everything else killed runs left.
func (r *run) sweep(context.Context) error {
	if r.o.DryRun { // a dry run takes up and removes nothing
		r.resumes = &resumer{st: r.st, tmp: r.tmp, points: map[int64]*download.ResumePoint{}}
		r.placer.resumes = r.resumes
		return nil
	}
	var err error
	if r.resumes, err = loadResumer(r.st, r.tmp); err != nil {
		return err
	}
	r.placer.resumes = r.resumes
	n, err := download.RemoveLeftovers(r.tmp, r.resumes.temps())
	if err != nil {
		return err
	}
	if n > 0 {
		r.emit(Event{Kind: LeftoversRemoved, Files: n})
	}
	return nil
}

func (r *run) prepareViews(context.Context) error { return r.views.prepare() }

// findLosses has the saved files missing or changed on disk (and those
// verify named) downloaded again, before anything is listed.
func (r *run) findLosses(ctx context.Context) error {
	redo := r.o.Redownload
	if !r.o.MetadataOnly {
		gone, err := r.losses.missingLocally()
		if err != nil {
			return err
		}
		redo = append(append([]int64{}, redo...), gone...)
	}
	for _, id := range redo {
		r.placer.restoring[id] = true
	}
	return r.losses.markForRedownload(ctx, redo)
}

// fetcher is the run's downloader: its retries, pace, ranges, bandwidth
// limit and resume points.
func (r *run) fetcher() *download.Fetcher {
	o := r.o
	f := &download.Fetcher{Client: o.Library, Policy: r.policy, TempFile: openTemp, OnBytes: func(n int64) {
		r.emit(Event{Kind: Progress, Bytes: n})
	}, Pace: paceOf(o), Streams: o.Streams, StreamAbove: o.StreamAbove}
	if o.BandwidthLimit.Limits() {
		f.Rate = rate.NewScheduled(o.BandwidthLimit, nil, nil)
	}
	if f.Streams == 0 {
		f.Streams, f.Ranges = download.DefaultStreams, pace.FoundRanges(download.DefaultStreams, o.PaceClock)
	}
	if o.ResumeAbove > 0 {
		f.Save, f.SaveAbove = r.resumes.save, o.ResumeAbove
	}
	return f
}

// paceOf is the run's limit on downloads in flight.
func paceOf(o *Options) *pace.Limiter {
	if o.Concurrency > 0 {
		return pace.Fixed(o.Concurrency)
	}
	return pace.Adaptive(o.MaxConcurrency, o.PaceClock)
}

// openTemp creates a download's temp file; tests replace it to model a
// full disk.
var openTemp = func(dir string) (*os.File, error) { return os.CreateTemp(dir, durable.TempPrefix+"*") }

// recordRun writes the folder's record of a run that started from
// o.Record.
func (r *run) recordRun(runErr error) error {
	if r.o.Record == nil || !r.tally.summary().Started {
		return nil
	}
	rec, ok := r.o.Record(r.tally.summary(), runErr)
	return r.f.WriteRun(rec, ok)
}

// eventPolicy is p, its retries also told as events.
func eventPolicy(p retry.Policy, t *tally) retry.Policy {
	prev := p.OnRetry
	p.OnRetry = func(err error, attempt int, d time.Duration) {
		if prev != nil {
			prev(err, attempt, d)
		}
		t.emit(Event{Kind: Retrying, Err: err, Attempt: attempt, Delay: d})
	}
	return p
}

// checkAccount refuses a folder that backs up another account, or the same
// user id on another server.
func (r *run) checkAccount(context.Context) error {
	a, err := r.st.Account()
	if err != nil {
		return err
	}
	if err := r.checkLink(a); err != nil {
		return err
	}
	if a != nil && a.UserID != r.o.Keys.UserID {
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of another account (%s, user %d)", a.Email, a.UserID)}
	}
	if a != nil && a.Endpoint != "" && r.o.Endpoint != "" && !account.SameEndpoint(a.Endpoint, r.o.Endpoint) {
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of an account on another server (%s)", a.Endpoint)}
	}
	if err := r.st.SetAccount(state.Account{UserID: r.o.Keys.UserID, Email: r.o.Email, Endpoint: r.o.Endpoint, Link: r.o.Link}); err != nil {
		return err
	}
	if r.o.Started != nil {
		return r.o.Started()
	}
	return nil
}
