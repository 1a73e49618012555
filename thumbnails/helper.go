package thumbnails

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// Class is what quak found of a file's thumbnail on the server.
type Class string

// Classes, docs/protocol.md §8.3.
const (
	OK          Class = "ok"          // downloads, decrypts with the file key, decodes as an image
	Lost        Class = "lost"        // the object store answers 404 after museum's redirect: repairable
	Corrupt     Class = "corrupt"     // twice fails to authenticate, or is not an image: repairable
	NoRecord    Class = "no-record"   // museum has no thumbnail row (404 before any redirect): not repairable
	Placeholder Class = "placeholder" // Ente's black placeholder on purpose: the size rule forbids a real one
	Unknown     Class = "unknown"     // could not be checked (5xx, timeouts, 429 past the retries): never repaired
)

// Action is what quak did about a file.
type Action string

// Actions.
const (
	None        Action = "none"         // nothing to do (ok)
	Reported    Action = "reported"     // no-record, placeholder, unknown: nothing quak may do
	Repaired    Action = "repaired"     // uploaded, committed, and read back identical
	WouldRepair Action = "would-repair" // --dry-run: a thumbnail that fits was made, not uploaded
	TooLarge    Action = "too-large"    // no thumbnail fits the size on record: not uploaded
	Unsupported Action = "unsupported"  // quak cannot read the original (format, missing tool)
	Failed      Action = "failed"       // the repair failed; Err says why
	Skipped     Action = "skipped"      // beyond --limit: left for another run
	Kept        Action = "kept"         // --check-content: a new thumbnail would not be clearly closer
)

// Event is one file's outcome. Fields that do not apply are zero.
type Event struct {
	FileID int64
	Album  string
	Title  string
	Class  Class
	Action Action
	// Budget is the recorded encrypted size a new thumbnail must not
	// exceed, and Size the encrypted size of the one made.
	Budget int64
	Size   int64
	Err    error
}

// Summary is what a run found and did.
type Summary struct {
	Owned        int // files the account owns, checked
	SharedIn     int // files in albums shared with the account, owned by others: never touched
	AlbumsFailed int // albums that could not be listed: their files went unchecked
	Classes      map[Class]int
	Actions      map[Action]int
	// Problems lists the files that keep the run from exit 0: unknown,
	// too-large, unsupported or failed.
	Problems []int64
	Duration time.Duration
}

// Healthy reports whether every owned file is ok, repaired, or beyond
// quak's reach by design (no-record, placeholder), and every album listed.
func (s *Summary) Healthy() bool { return len(s.Problems) == 0 && s.AlbumsFailed == 0 }

// Options configure a run of the helper.
type Options struct {
	Client      *apiclient.Client // authenticated
	Keys        catalog.Keys
	Policy      retry.Policy
	Concurrency int           // files checked and repaired at once (default 4)
	DryRun      bool          // find and regenerate, upload nothing
	Limit       int           // repair at most this many (0: no limit)
	Albums      filter.Albums // only files in these albums
	// IDs, if set, limits the run to these files; an id that is not one of
	// the account's files in the albums checked is reported (unknown).
	IDs []int64
	// CheckContent also compares every thumbnail that decrypts with its
	// original (blank, garbled, turned, wrong picture) and repairs those
	// that show the wrong picture, when the new one is clearly closer.
	CheckContent bool
	// FromDir is a quak backup folder whose verified copies are used
	// instead of downloading originals ("" to always download).
	FromDir string
	// TempDir holds originals and tool output while a thumbnail is made
	// (default os.TempDir()); quak makes a private folder in it and removes
	// it at the end.
	TempDir string
	// RecheckWait is how long a look at a thumbnail the object store
	// answered 404 for waits before the second (default LossRecheckWait).
	RecheckWait time.Duration
	Tools       Tools     // external decoders (default SystemTools)
	Rand        io.Reader // header randomness (default crypto/rand)
	// Listed, if set, hears how many files will be checked, once they are
	// listed and before the first is checked (for a progress bar).
	Listed func(n int)
	// Events, if set, hears of each file once, and of each album that
	// could not be listed (FileID 0, Err set). Calls never overlap.
	Events func(Event)
}

// ErrBackupBusy reports that --from's backup folder is in use by a backup.
var ErrBackupBusy = errors.New("the backup folder is in use by a running backup; try again when it ends")

type run struct {
	o    Options
	tmp  string
	from *localCopies

	emitMu  sync.Mutex
	mu      sync.Mutex
	sum     Summary
	started int // repairs started, against Limit
	checked int // files whose thumbnail was checked (not no-record or placeholder)
	lost    []*candidate
}

// Run finds the account's owned files whose thumbnails are lost or corrupt
// and repairs them. Files that fail are reported in the summary, not as an
// error; errors stop the run: errs.ErrNotLoggedIn, context errors, a
// listing that fails, an unusable --from folder.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	o = o.withDefaults()
	r := &run{o: o, sum: Summary{Classes: map[Class]int{}, Actions: map[Action]int{}}}
	defer func() { r.sum.Duration = time.Since(start) }()
	if o.FromDir != "" {
		lc, err := openLocalCopies(o.FromDir)
		if err != nil {
			return &r.sum, err
		}
		defer lc.close()
		r.from = lc
	}
	tmp, err := os.MkdirTemp(o.TempDir, "quak-thumbnails-")
	if err != nil {
		return &r.sum, fmt.Errorf("making a private temp folder: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	r.tmp = tmp

	files, err := r.list(ctx)
	if err != nil {
		return &r.sum, err
	}
	r.sum.Owned = len(files)
	if o.Listed != nil {
		o.Listed(len(files))
	}
	if err := r.handleAll(ctx, files); err != nil {
		return &r.sum, err
	}
	if err := r.repairLost(ctx); err != nil {
		return &r.sum, err
	}
	sort.Slice(r.sum.Problems, func(i, j int) bool { return r.sum.Problems[i] < r.sum.Problems[j] })
	return &r.sum, nil
}

// withDefaults fills in what o leaves unset.
func (o Options) withDefaults() Options {
	if o.Concurrency < 1 {
		o.Concurrency = 4
	}
	if o.RecheckWait <= 0 {
		o.RecheckWait = LossRecheckWait
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Tools.LookPath == nil || o.Tools.Run == nil {
		o.Tools = SystemTools()
	}
	return o
}

// handleAll handles files, o.Concurrency at once; the first error stops
// them all and is returned.
func (r *run) handleAll(ctx context.Context, files []*candidate) error {
	return r.each(ctx, files, r.handle)
}

// each calls do on every candidate, o.Concurrency at once. The first
// error do returns stops the rest (none starts after it) and is returned;
// so is ctx's cause when ctx ends first.
func (r *run) each(ctx context.Context, cs []*candidate, do func(context.Context, *candidate) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.o.Concurrency)
	for _, c := range cs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // stopped while it waited for a worker
			}
			return do(gctx, c)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// handle checks one file and repairs it when it may. Only errors that stop
// the run are returned.
func (r *run) handle(ctx context.Context, c *candidate) error {
	defer func() { c.base = nil }() // the original's pixels go with the file
	class, plain, err := r.check(ctx, c)
	if fatal(ctx, err) {
		return err
	}
	if class == OK && r.o.CheckContent {
		class, err = r.content(ctx, c, plain)
		if fatal(ctx, err) {
			return err
		}
	}
	r.mu.Lock()
	if class != Placeholder && class != NoRecord {
		r.checked++
	}
	if class == Lost {
		// Repaired once every file is checked, and only if the losses are
		// plausible (repairLost).
		r.lost = append(r.lost, c)
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	return r.settle(ctx, c, class, err)
}

// settle repairs c when class allows, and records the outcome.
func (r *run) settle(ctx context.Context, c *candidate, class Class, err error) error {
	e := Event{FileID: c.item.FileID, Album: c.album, Title: c.item.Meta.Title, Class: class, Err: err}
	switch class {
	case OK:
		e.Action = None
	case Lost, Corrupt, Blank, Garbled, Turned, WrongPicture:
		e.Err = nil
		e.Action, e.Size, e.Err = r.repair(ctx, c, class)
		if fatal(ctx, e.Err) {
			return e.Err
		}
	default:
		e.Action = Reported
	}
	if c.budget >= 0 {
		e.Budget = c.budget
	}
	r.record(e)
	return nil
}

// StoreUnavailableError reports that so many of the thumbnails checked
// looked lost at once that the object store, not the thumbnails, is the
// likely cause: nothing was repaired.
type StoreUnavailableError struct {
	Lost, Checked int
}

func (e *StoreUnavailableError) Error() string {
	return fmt.Sprintf("%d of the %d thumbnails checked look lost at once: the object store looks unavailable "+
		"(an outage, or a proxy misrouting its paths), so nothing was repaired; run again once it answers", e.Lost, e.Checked)
}

// implausibleLoss reports whether lost of checked thumbnails missing at
// once is more likely the store's fault than theirs: more than half of
// four or more (a run over one to three files, --ids, may find all lost).
func implausibleLoss(lost, checked int) bool {
	return checked >= 4 && 2*lost > checked
}

// repairLost repairs the files found lost, unless too many look lost at
// once: then each is reported and the run stops with *StoreUnavailableError.
func (r *run) repairLost(ctx context.Context) error {
	sort.Slice(r.lost, func(i, j int) bool { return r.lost[i].item.FileID < r.lost[j].item.FileID })
	if implausibleLoss(len(r.lost), r.checked) {
		for _, c := range r.lost {
			r.mu.Lock()
			r.sum.Problems = append(r.sum.Problems, c.item.FileID)
			r.mu.Unlock()
			r.record(Event{FileID: c.item.FileID, Album: c.album, Title: c.item.Meta.Title, Class: Lost, Action: Reported})
		}
		return &StoreUnavailableError{Lost: len(r.lost), Checked: r.checked}
	}
	return r.each(ctx, r.lost, func(ctx context.Context, c *candidate) error { return r.settle(ctx, c, Lost, nil) })
}

func (r *run) record(e Event) {
	r.mu.Lock()
	r.sum.Classes[e.Class]++
	r.sum.Actions[e.Action]++
	switch e.Action {
	case TooLarge, Unsupported, Failed, Kept:
		r.sum.Problems = append(r.sum.Problems, e.FileID)
	default:
		if e.Class == Unknown {
			r.sum.Problems = append(r.sum.Problems, e.FileID)
		}
	}
	r.mu.Unlock()
	r.emit(e)
}

func (r *run) emit(e Event) {
	if r.o.Events == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.o.Events(e)
}

// takeSlot counts a repair against --limit, or reports that none is left.
func (r *run) takeSlot() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.o.Limit > 0 && r.started >= r.o.Limit {
		return false
	}
	r.started++
	return true
}

// fatal reports errors that stop the whole run.
func fatal(ctx context.Context, err error) bool {
	return err != nil && (errors.Is(err, errs.ErrNotLoggedIn) || ctx.Err() != nil)
}
