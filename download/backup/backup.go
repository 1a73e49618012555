package backup

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/download/rate"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
)

// pipeline is one backup of the account into its folder: what every step
// shares; it makes the collaborators that do the work, each given what it
// uses.
type pipeline struct {
	o        *Options
	f        *folder.Folder
	st       *state.Store
	disk     disk
	dry      *dryDisk // the disk of a dry run; nil in a real one
	tally    *tally
	names    *names
	albums   *albumSet
	expected *expected
	views    *views.Keeper
	down     *outage
	policy   retry.Policy // retries tell the tally
	resumes  *resumer
	// restoring are the saved files downloaded again because they went
	// missing or changed on disk.
	restoring map[int64]bool
	recordRun func(error) error // the folder's record of the run (none in a dry run)
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
	return newPipeline(f, &o, start).run(ctx, st)
}

// newPipeline is a run of o into f, with its disk and tally.
func newPipeline(f *folder.Folder, o *Options, start time.Time) *pipeline {
	r := &pipeline{o: o, f: f, tally: newTally(o.Events, start), down: &outage{}, expected: &expected{}, restoring: map[int64]bool{}}
	r.policy = eventPolicy(o.Policy, r.tally)
	if o.Library != nil {
		r.down.answers = func(ctx context.Context, rawURL string) bool {
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			return o.Library.Answers(ctx, rawURL)
		}
	}
	if o.DryRun {
		r.dry = newDryDisk()
		r.disk, r.recordRun = r.dry, func(error) error { return nil }
	} else {
		r.disk, r.recordRun = newRealDisk(f), r.writeRun
	}
	return r
}

// open gives the run its state, and what reads it: the names taken, the
// albums, the views.
func (r *pipeline) open(st *state.Store) {
	o := r.o
	r.st, r.names = st, newNames(st)
	r.albums = &albumSet{root: r.f.Dir, st: st, disk: r.disk}
	r.views = views.NewKeeper(views.Config{Dir: r.f.Dir, DirName: o.Dir, Options: o.Views, UserID: o.Keys.UserID, Store: st, Disk: r.disk,
		Albums: r.albums.all, PartsExist: r.albums.partsExist, Taken: r.names.taken, Record: r.record,
		DiskError: func(err error) error { return diskError(o.Dir, err) }, Tell: r.tell, Now: o.Now})
}

// run is the pipeline: check the account and the date view's folder (a
// refusal is a run that never started), sweep what killed runs left, bring
// the views in line, find what went missing on disk, then list and
// download, prune, and count.
func (r *pipeline) run(ctx context.Context, st *state.Store) (_ *Summary, err error) {
	defer func() {
		r.tally.count(func(s *Summary) { s.Duration = time.Since(s.Start) })
		if rerr := r.recordRun(err); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if st == nil {
		if st, err = r.f.OpenState(); err != nil {
			return r.tally.summary(), err
		}
		defer func() { _ = st.Close() }()
	}
	r.open(st)
	if err := r.checkAccount(ctx); err != nil {
		return r.tally.summary(), err // refused: nothing written, nothing recorded but the refusal
	}
	if err := r.views.Check(); err != nil {
		return r.tally.summary(), err // refused as well
	}
	r.tally.count(func(s *Summary) { s.Started = true })
	for _, step := range []func(context.Context) error{r.sweep, r.prepareViews, r.findLosses} {
		if err := step(ctx); err != nil {
			return r.tally.summary(), err
		}
	}
	seen := newProof()
	err = r.lister(seen).sync(ctx)
	if err == nil && r.o.Prune {
		err = r.pruner(seen).prune(ctx)
	}
	if err == nil {
		r.resumes.dropStale(r.tally.wasTouched)
	}
	r.tally.total(r.st)
	return r.tally.summary(), err
}

// commit brings the views of files in line with their records, then
// records them: what every collaborator commits through.
func (r *pipeline) commit(files []*state.File, c *state.Collection) error {
	r.expected.forget(files)
	if err := r.views.Apply(files, c); err != nil {
		return err
	}
	return r.record(files, c)
}

// record syncs the folders written since the last commit, then records
// files and the album in one transaction: the state never points at a
// name that a crash could still take back.
func (r *pipeline) record(files []*state.File, c *state.Collection) error {
	if err := r.disk.Sync(); err != nil {
		return err
	}
	return r.st.Commit(files, c)
}

// tell turns what the views tell into the run's events.
func (r *pipeline) tell(n views.Note) {
	if n.Moved {
		r.tally.emit(Event{Kind: AlbumRenamed, Album: n.Album, CollectionID: n.CollectionID, Path: n.Path})
		return
	}
	r.tally.emit(Event{Kind: FileWarning, Album: n.Album, Title: n.Title, FileID: n.FileID, CollectionID: n.CollectionID,
		Path: n.Path, Err: n.Err})
}

// sweep loads where earlier runs left large downloads, and empties the
// temp area of everything else killed runs left.
func (r *pipeline) sweep(context.Context) error {
	tmp := r.f.Temp()
	if r.o.DryRun { // a dry run takes up and removes nothing
		r.resumes = &resumer{st: r.st, tmp: tmp, points: map[int64]*download.ResumePoint{}}
		return nil
	}
	var err error
	if r.resumes, err = loadResumer(r.st, tmp); err != nil {
		return err
	}
	n, err := download.RemoveLeftovers(tmp, r.resumes.temps())
	if err != nil {
		return err
	}
	if n > 0 {
		r.tally.emit(Event{Kind: LeftoversRemoved, Files: n})
	}
	return nil
}

// prepareViews applies a change of views to the whole backup, downloading
// nothing.
func (r *pipeline) prepareViews(context.Context) error {
	prev, err := r.f.ReadViewOptions()
	if err != nil {
		return err
	}
	if err := r.albums.load(); err != nil {
		return err
	}
	n, err := r.views.Prepare(prev, r.o.MetadataOnly)
	if n > 0 {
		r.tally.emit(Event{Kind: ViewsChanged, Files: n})
	}
	return err
}

// findLosses has the saved files missing or changed on disk (and those
// verify named) downloaded again, before anything is listed.
func (r *pipeline) findLosses(ctx context.Context) error {
	o := r.o
	l := &losses{root: r.f.Dir, st: r.st, lib: o.Library, policy: o.Policy, filter: o.Filter, down: r.down, tally: r.tally}
	redo := o.Redownload
	if !o.MetadataOnly {
		gone, err := l.missingLocally()
		if err != nil {
			return err
		}
		redo = append(append([]int64{}, redo...), gone...)
	}
	for _, id := range redo {
		r.restoring[id] = true
	}
	return l.markForRedownload(ctx, redo)
}

// lister wires the collaborators of the listing, which note what it
// showed in seen.
func (r *pipeline) lister(seen *proof) *lister {
	o := r.o
	names := &partNames{root: r.f.Dir, names: r.names, disk: r.disk, views: r.views, expected: r.expected}
	adopt := &adopter{root: r.f.Dir, albums: r.albums, names: r.names, parts: names, disk: r.disk, views: r.views, tally: r.tally,
		local: &localFiles{root: r.f.Dir, st: r.st, claimed: r.albums.claimed}}
	relink := &relinker{st: r.st, shown: o.Dir, albums: r.albums, disk: r.disk, views: r.views, tally: r.tally, commit: r.commit}
	update := &updater{albums: r.albums, names: r.names, parts: names, disk: r.disk, views: r.views, tally: r.tally,
		untrash: &untrasher{root: r.f.Dir, albums: r.albums, parts: names, disk: r.disk, views: r.views, tally: r.tally}}
	pages := &pager{st: r.st, shown: o.Dir, filter: o.Filter, metadataOnly: o.MetadataOnly, seen: seen, names: names,
		expected: r.expected, adopt: adopt, update: update, tally: r.tally,
		refresh: &refresher{update: update, albums: r.albums, disk: r.disk, views: r.views, tally: r.tally}}
	fetcher := r.fetcher()
	pages.workers = fetcher.Pace.Max()
	if r.dry != nil {
		pages.save = (&pretender{disk: r.dry, albums: r.albums, names: names, adopt: adopt, tally: r.tally}).pretend
	} else {
		pages.save = (&placer{fetcher: fetcher, tmp: r.f.Temp(), mode: o.FileMode, shown: o.Dir, albums: r.albums, names: names,
			disk: r.disk, views: r.views, relink: relink, adopt: adopt, resumes: r.resumes, down: r.down, tally: r.tally,
			restoring: r.restoring}).download
	}
	l := &lister{st: r.st, lib: o.Library, policy: r.policy, shown: o.Dir, filter: o.Filter, metadataOnly: o.MetadataOnly,
		albums: r.albums, relink: relink, pages: pages, views: r.views, seen: seen, down: r.down, tally: r.tally, commit: r.commit,
		recorder: &albumRecorder{root: r.f.Dir, albums: r.albums, names: r.names, adopt: adopt, views: r.views, disk: r.disk,
			tally: r.tally, commit: r.commit},
		retries: &retrier{st: r.st, filter: o.Filter, albums: r.albums, pages: pages, commit: r.commit}}
	if o.FreeSpace != nil {
		l.space = &spaceCheck{st: r.st, lib: o.Library, policy: r.policy, root: r.f.Dir, shown: o.Dir, tmp: r.f.Temp(),
			filter: o.Filter, albums: r.albums, down: r.down, freeSpace: o.FreeSpace}
	}
	return l
}

// pruner wires the prune of what the listing (seen) showed deleted.
func (r *pipeline) pruner(seen *proof) *pruner {
	o := r.o
	return &pruner{root: r.f.Dir, trash: r.f.Trash(), st: r.st, lib: o.Library, policy: r.policy, filter: o.Filter,
		maxDelete: o.MaxDelete, now: o.Now, seen: seen, views: r.views, disk: r.disk, down: r.down, tally: r.tally, commit: r.commit}
}

// fetcher is the run's downloader: its retries, pace, ranges, bandwidth
// limit and resume points.
func (r *pipeline) fetcher() *download.Fetcher {
	o := r.o
	f := &download.Fetcher{Client: o.Library, Policy: r.policy, TempFile: openTemp, OnBytes: func(n int64) {
		r.tally.emit(Event{Kind: Progress, Bytes: n})
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

// writeRun writes the folder's record of a run that started from
// o.Record.
func (r *pipeline) writeRun(runErr error) error {
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
// user id on another server, or another link's album.
func (r *pipeline) checkAccount(context.Context) error {
	a, err := r.st.Account()
	if err != nil {
		return err
	}
	if err := r.checkLink(a); err != nil {
		return err
	}
	this := state.Account{UserID: r.o.Keys.UserID, Email: r.o.Email, Endpoint: r.o.Endpoint, Link: r.o.Link}
	if a != nil && (a.UserID != this.UserID || a.Endpoint != "" && this.Endpoint != "" && !account.SameEndpoint(a.Endpoint, this.Endpoint)) {
		// Both named in full: the same email can be an account on two servers.
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of %s, not of %s", a.Name(), this.Name())}
	}
	if err := r.st.SetAccount(this); err != nil {
		return err
	}
	if r.o.Started != nil {
		return r.o.Started()
	}
	return nil
}

// checkLink refuses a folder that follows another link's album than this
// run's, a link's folder to an account, and an account's to a link.
func (r *pipeline) checkLink(a *state.Account) error {
	switch {
	case a == nil || a.Link == r.o.Link:
		return nil
	case a.Link != 0 && r.o.Link != 0:
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of a public link to another album (album %d)", a.Link)}
	case a.Link != 0:
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of a public link (album %d), not of an account", a.Link)}
	}
	return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf("is the backup of an account (%s), not of a public link", a.Email)}
}
