package backup

import (
	"os"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/rate"
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

// Views are the files quak keeps beside the originals for other photo
// tools, chosen per backup folder and remembered there (package views).
type Views = views.Options

// DateViewDir is the top-level folder of the date view. No album folder
// takes this name: an album called so gets "By date_1".
const DateViewDir = views.DateViewDir

// DefaultMaxDelete is how many album entries one run may prune at most.
const DefaultMaxDelete = 100

// DefaultResumeAbove is the size above which a download can be taken up
// by a later run, and how often its resume point is recorded.
const DefaultResumeAbove = 64 << 20
