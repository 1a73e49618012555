package restore

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

// Options configure a restore.
type Options struct {
	Dir    string // the backup folder
	Target Target
	Policy retry.Policy
	// DryRun plans and reports, sending nothing that changes the target
	// and writing nothing in Dir.
	DryRun bool
	// Events, if set, hears of every decision and upload, from one
	// goroutine at a time.
	Events func(Event)
	// Now is the clock of the upload-URL window (default time.Now).
	Now func() time.Time
	// Tools make thumbnails of what Go cannot decode (default: the
	// programs on PATH).
	Tools *thumbnails.Tools
	// Rand is the source of keys and nonces (default crypto/rand).
	Rand io.Reader
	// URLsPerMinute caps the upload URLs minted a minute on each route
	// (default museum's 500).
	URLsPerMinute int
	// Concurrency is how many originals are restored at once (default 4).
	Concurrency int
	// Journals is a folder of restore journals outside the source (the
	// config folder's): the journal goes there when Dir cannot be written,
	// or always with JournalsAlways (--journal); one found there for this
	// source and target is used again.
	Journals       string
	JournalsAlways bool
	// Albums narrows what is restored to the albums it chooses.
	Albums filter.Albums
	// Shared says whether albums others shared with the backed-up account
	// come back (default: not into that account itself).
	Shared SharedChoice
	// Confirm, if set, hears what the run is about to do once the target
	// is listed, before anything is sent to it; an error it returns ends
	// the run. A dry run hears it too.
	Confirm func(*Preview) error
	// Progress, if set, hears of each original's ciphertext bytes as the
	// store takes them, from one goroutine at a time.
	Progress func(n int64)

	encrypt encryptFunc // the original's encryption (tests break it)
	// keyWait, if set, hears of an original that waits for another of the
	// same content (tests order their requests by it).
	keyWait func(title string)
}

// Target is the account restored into.
type Target struct {
	Client   *apiclient.Client // authenticated
	Keys     catalog.Keys
	Email    string
	Endpoint string
}

// Summary is what a restore did, or for a dry run would do.
type Summary struct {
	Files         int   // originals in the backup that can be restored
	Uploaded      int   // originals uploaded by this run
	Present       int   // already in the target: not uploaded
	Added         int   // files added to a further album
	AlbumsCreated int   // albums created in the target
	Bytes         int64 // ciphertext bytes of the originals uploaded (planned, for a dry run)
	// ThumbBytes are the thumbnails' ciphertext bytes sent; for a dry run,
	// the most they can be.
	ThumbBytes   int64
	Failed       int
	LeftOut      int // not restorable: not saved in the backup, or deleted at the source
	Filtered     int // left out by the choice of albums (or as others' files)
	Placeholders int // uploaded with Ente's placeholder thumbnail
	Failures     []Failure
	// Shared names the albums others shared with the backed-up account
	// that were left out.
	Shared []string
	// Preview is what the run said it would do before it sent anything
	// (nil for a run refused before).
	Preview *Preview
}

// Failure is an original that could not be restored.
type Failure struct {
	Source int64  `json:"source"`
	Title  string `json:"title"`
	Where  string `json:"where,omitempty"` // an import's: where its source holds it
	Error  string `json:"error"`
}

// QuotaError reports that the target account cannot take what is to be
// uploaded: its plan is full (426), expired (402), or the headroom quak
// budgets from /users/details/v2 is smaller than the upload.
type QuotaError struct {
	Need, Headroom int64
	Err            error // the server's refusal, when it refused
}

func (e *QuotaError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("the target account is out of storage: %v", e.Err)
	}
	return fmt.Sprintf("the target account has room for %d more bytes, the restore needs %d", e.Headroom, e.Need)
}

func (e *QuotaError) Unwrap() error { return e.Err }

// Run restores the backup in o.Dir into o.Target. Errors: *QuotaError,
// *RateLimitError, folder.ErrLocked, *folder.DirError for a folder
// without a backup, *filter.NoMatchError for an o.Albums pattern that
// matches no album, what o.Confirm returned, the server's
// (*errs.ApiError) when it refuses the session or cannot be reached;
// files that fail one by one are in Summary.Failures and are retried by
// the next run.
func Run(ctx context.Context, o Options) (*Summary, error) {
	o.defaults()
	f := folder.At(o.Dir)
	if err := f.CheckRestorable(); err != nil {
		return nil, err
	}
	src, err := identify(ctx, f)
	if err != nil {
		return nil, err
	}
	r := &run{o: o, f: f, src: src, sum: &Summary{}, encrypt: o.encrypt}
	if err := r.placeJournal(); err != nil {
		return nil, err
	}
	if !o.DryRun {
		unlock, err := r.openJournal()
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	p, err := src.read(r.selection())
	if err != nil {
		return nil, err
	}
	r.plan = p
	r.sum.Files, r.sum.LeftOut, r.sum.Filtered = len(p.files), p.leftOut, p.filtered
	for _, name := range p.shared {
		r.sum.Shared = append(r.sum.Shared, name)
	}
	sort.Strings(r.sum.Shared)
	return r.sum, r.run(ctx)
}

// selection is what the options choose of this source for this target.
func (r *run) selection() selection {
	sel := selection{albums: r.o.Albums}
	if r.src.account != nil {
		sel.user = r.src.account.UserID
	}
	switch r.o.Shared {
	case SharedLeave:
		sel.noShared = true
	case SharedAuto:
		sel.noShared = r.src.sameAccount(r.o.Target)
	}
	return sel
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	o.Rand = &lockedReader{r: o.Rand}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Tools == nil {
		t := thumbnails.SystemTools()
		o.Tools = &t
	}
	if o.URLsPerMinute <= 0 {
		o.URLsPerMinute = 500
	}
	if o.Policy.Sleep == nil {
		o.Policy = retry.Default()
	}
}

// parentHint points at the folder above dir when that is what holds the
// backup or export dir is a part of.
func parentHint(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	up := filepath.Dir(abs)
	if up != abs && (folder.At(up).HasState() || IsEnteExport(up) || IsDesktopExport(up)) {
		return "; it is " + partName(filepath.Base(abs)) + " of " + up + ": restore that folder"
	}
	return ""
}

// partName says what a folder of a backup or export is, by its name.
func partName(name string) string {
	switch name {
	case folder.StateDir:
		return "quak's own folder"
	case "By date":
		return "the date view"
	}
	return "an album folder"
}
