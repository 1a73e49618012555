// Package restore puts a quak backup back into an Ente account, each
// original exactly once: what the target already has is added to its
// albums, never uploaded again, and every upload is journaled before it is
// sent, so that a retry or a later run resends what was sent and never
// makes a second file.
package restore

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/catalog"
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
	Bytes         int64 // ciphertext bytes of the files uploaded (planned, for a dry run)
	Failed        int
	LeftOut       int // not restorable: not saved in the backup, or deleted at the source
	Placeholders  int // uploaded with Ente's placeholder thumbnail
	Failures      []Failure
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
// folder.ErrLocked, *folder.DirError for a folder without a backup, the server's (*errs.ApiError)
// when it refuses the session or cannot be reached; files that fail one
// by one are in Summary.Failures and are retried by the next run.
func Run(ctx context.Context, o Options) (*Summary, error) {
	o.defaults()
	f := folder.At(o.Dir)
	if err := f.CheckRestorable(); err != nil {
		return nil, err
	}
	read := func() (*plan, error) { return readPlan(f) }
	switch {
	case f.HasState():
	case IsEnteExport(o.Dir):
		read = func() (*plan, error) { return readExport(ctx, o.Dir) }
	case IsDesktopExport(o.Dir):
		read = func() (*plan, error) { return readDesktopExport(ctx, o.Dir) }
	default:
		return nil, &folder.DirError{Dir: o.Dir, Reason: "holds no quak backup and no export of Ente's CLI or desktop app" + parentHint(o.Dir)}
	}
	if !f.HasState() && !o.DryRun {
		if err := f.MakeRestoreArea(); err != nil {
			return nil, err
		}
	}
	if !o.DryRun {
		unlock, err := f.LockFor("restore")
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	p, err := read()
	if err != nil {
		return nil, err
	}
	r := &run{o: o, f: f, plan: p, sum: &Summary{Files: len(p.files), LeftOut: p.leftOut}, encrypt: o.encrypt, tmp: f.Temp()}
	return r.sum, r.run(ctx)
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
