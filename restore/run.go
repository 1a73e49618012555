package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// run is one restore of a backup folder into an account.
type run struct {
	o      Options
	f      *folder.Folder
	src    *origin
	plan   *plan
	sum    *Summary
	j      *folder.Journal // nil in a dry run
	tgt    *target
	albums map[int64]*catalog.Album // source album id → the target's
	urls   *window
	mu     sync.Mutex // guards sum and the events
	// albumMu makes one album at a time: two files of a new album wait
	// for one creation.
	albumMu sync.Mutex
	keys    keyLocks
	// encrypt makes an original's ciphertext (secretstream's, but for the
	// tests of the self-check).
	encrypt encryptFunc
	// tmp is the folder of the run's temp files: an import's, or a
	// restore's (its folder's, or its journal's when kept outside DIR).
	tmp string
	// thumbMu makes an import's thumbnails one at a time: a decoded image
	// is the largest thing an import holds.
	thumbMu sync.Mutex
	// store holds the journal when it is kept outside DIR (storeWhy says
	// why), else nil; resuming: the journal held records of earlier runs.
	store    *folder.JournalStore
	storeWhy string
	resuming bool
}

func (r *run) run(ctx context.Context) error {
	r.albums = map[int64]*catalog.Album{}
	r.urls = newWindow(r.o.URLsPerMinute, r.o.Now, r.o.Policy.Sleep)
	if r.encrypt == nil {
		r.encrypt = secretstream.NewEncryptReader
	}
	var err error
	if r.tgt, err = r.listTarget(ctx); err != nil {
		return err
	}
	pv, err := r.preview(ctx)
	if err != nil {
		return err
	}
	r.sum.Preview = pv
	if r.o.Confirm != nil {
		if err := r.o.Confirm(pv); err != nil {
			return err
		}
	}
	if err := r.checkQuota(ctx, pv.Bytes+pv.ThumbBytes); err != nil {
		return err
	}
	for _, f := range r.plan.failures {
		r.note(Event{Kind: Failed, Source: f.Source, Title: f.Title, Err: errors.New(f.Error)}, func(s *Summary) {
			s.Failures = append(s.Failures, f)
		})
	}
	if more := r.plan.failed - len(r.plan.failures); more > 0 {
		f := Failure{Title: "the export", Error: fmt.Sprintf("%d more files could not be read", more)}
		r.note(Event{Kind: Failed, Title: f.Title, Err: errors.New(f.Error)}, func(s *Summary) { s.Failures = append(s.Failures, f) })
	}
	r.note(Event{}, func(s *Summary) { s.Failed += r.plan.failed })
	return r.each(ctx, r.plan.files)
}

// fatal reports an error that ends the run rather than one file: the
// run was stopped, the session or the plan refused, the server gone.
func fatal(ctx context.Context, err error) bool {
	var qe *QuotaError
	var rl *RateLimitError
	return ctx.Err() != nil || errors.As(err, &qe) || errors.As(err, &rl) || errors.Is(err, errs.ErrNotLoggedIn) ||
		errors.Is(err, folder.ErrLocked) || retry.Unreachable(err)
}

// one restores an original: added to its albums when the target has it,
// else sealed (or taken from the journal), uploaded and committed once.
func (r *run) one(ctx context.Context, o *original) error {
	key := contentKey(o.hash(), o.rec.Meta.FileType, o.rec.Meta.Title)
	unlock, err := r.keys.lock(ctx, key, func() {
		if r.o.keyWait != nil {
			r.o.keyWait(o.rec.Meta.Title)
		}
	})
	if err != nil {
		return err
	}
	defer unlock()
	if r.keys.isUnsure(key) {
		return errUnconfirmed
	}
	in, err := r.intent(ctx, o, key)
	if err != nil {
		return err
	}
	p := r.tgt.file(key)
	if in != nil && in.FileID != 0 && p != nil && p.id == in.FileID { // restored by an earlier run, and still there
		r.note(Event{Kind: Present, Source: o.rec.ID, Title: o.rec.Meta.Title}, func(s *Summary) { s.Present++ })
		return r.addToAlbums(ctx, o, in.FileID, in.FileKey, p.albums, in)
	}
	// What the target has is never sent again: not when this run finds
	// it, nor for a journal's file never committed whose content reached
	// the target since (a restore from a copy of this backup, say). A
	// commit of ours whose answer was lost is found in the album since its
	// cursor instead (commit), the listing having been taken before.
	if p != nil {
		r.note(Event{Kind: Present, Source: o.rec.ID, Title: o.rec.Meta.Title}, func(s *Summary) { s.Present++ })
		if p.planned != nil {
			return r.planAdditions(ctx, o, p.planned)
		}
		return r.addToAlbums(ctx, o, p.id, p.key, p.albums, nil)
	}
	if in == nil {
		if err := checkMetadata(o); err != nil {
			return err
		}
		if r.o.DryRun {
			if err := plainParts(o); err != nil {
				return err
			}
			return r.planUpload(ctx, o)
		}
		if in, err = r.seal(ctx, o); err != nil {
			return err
		}
	}
	if err := r.upload(ctx, o, in); err != nil {
		var ce *ChangedError
		switch {
		case in.Cursor != 0:
			r.keys.markUnsure(key) // its commit may have landed
		case errors.As(err, &ce):
			// Nothing of it was committed: the next run encrypts the
			// source as it is then.
			err = errors.Join(err, r.j.DropIntent(o.rec.ID))
		}
		return err
	}
	return r.addToAlbums(ctx, o, in.FileID, in.FileKey, map[int64]bool{in.Album: true}, in)
}

// intent is the journal's record of o when it may still be acted on. A
// record is a hint: what it says of the target is trusted only as far as
// the target bears it out. A record of another file (copied over this
// one's), of another content than the backup's now, of a file the target
// no longer holds live, of a commit that never landed in an album the
// target has lost, or of a source that changed since it was encrypted is
// dropped, and o starts afresh.
func (r *run) intent(ctx context.Context, o *original, key string) (*folder.Intent, error) {
	if r.j == nil {
		return nil, nil
	}
	in, err := r.j.Intent(o.rec.ID)
	if err != nil || in == nil {
		return nil, err
	}
	why, err := r.distrust(ctx, o, in, key)
	if err != nil || why == "" {
		return in, err
	}
	r.note(Event{Kind: Restarted, Source: o.rec.ID, Title: o.rec.Meta.Title, Err: errors.New(why)}, func(*Summary) {})
	return nil, r.j.DropIntent(o.rec.ID)
}

// distrust says why o's record in is not to be acted on, or "".
func (r *run) distrust(ctx context.Context, o *original, in *folder.Intent, key string) (string, error) {
	// A streamed import's record learns its hash only once the original
	// is read through.
	streamed := o.src != nil && in.Hash == ""
	if in.Source != o.rec.ID || in.Hash != o.hash() && !streamed || in.FileType != o.rec.Meta.FileType || in.Title != o.rec.Meta.Title {
		return "its journal record is not of this file as the backup holds it now", nil
	}
	if in.FileID != 0 {
		if p := r.tgt.file(key); p == nil || p.id != in.FileID {
			return "the target no longer holds the file it was restored as (deleted there since)", nil
		}
		return "", nil
	}
	home := r.tgt.byID(in.Album)
	changed := r.changedSince(o, in)
	if home != nil && !changed {
		return "", nil
	}
	if home != nil && in.Cursor != 0 {
		// Its commit was sent: if it landed after the listing, it is the
		// file, whatever the source is now.
		id, err := r.confirm(ctx, home.Album, in)
		if err != nil || id != 0 {
			return "", errors.Join(err, r.committed(in, id))
		}
	}
	if home == nil {
		return "its album is no longer in the target (deleted there since)", nil
	}
	return "its source changed since it was encrypted for its upload", nil
}

// changedSince reports whether o's parts are no longer what in encrypted:
// another size or modification time (for a record of an older quak, which
// kept neither, another size). An import's original is checked against
// its hash as it is read instead.
func (r *run) changedSince(o *original, in *folder.Intent) bool {
	if o.src != nil {
		return false
	}
	if len(in.Src) == 0 {
		fi, err := os.Lstat(o.parts[0])
		return len(o.parts) == 1 && (err != nil || secretstream.CiphertextSize(fi.Size()) != in.File.Size)
	}
	if len(in.Src) != len(o.parts) {
		return true
	}
	for i, p := range o.parts {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || statOf(fi) != in.Src[i] {
			return true
		}
	}
	return false
}

// errUnconfirmed fails an original whose content another original of the
// run may have committed, unconfirmed: uploading it would make a second
// file. The next run's listing shows whether the target has it.
var errUnconfirmed = errors.New("another copy of the same content was sent and its arrival could not be confirmed; the next run finds it")

// hash is the metadata hash of the original: its parts' hashes, joined
// for a live photo.
func (o *original) hash() string { return strings.Join(o.hashes, ":") }

// planUpload counts an upload a dry run would make, and the albums it
// would create.
func (r *run) planUpload(ctx context.Context, o *original) error {
	for _, id := range o.albums {
		if _, err := r.album(ctx, r.plan.albums[id]); err != nil {
			return err
		}
	}
	n := r.size(o)
	r.note(Event{Kind: Uploaded, Source: o.rec.ID, Title: o.rec.Meta.Title, Bytes: n}, func(s *Summary) {
		s.Uploaded++
		s.Bytes += n
		s.ThumbBytes += thumbEstimate
	})
	// A second original of this content finds it planned, as the real run
	// would find it uploaded.
	planned := map[int64]bool{r.plan.home(o): true}
	r.tgt.putFile(contentKey(o.hash(), o.rec.Meta.FileType, o.rec.Meta.Title), &present{planned: planned})
	return r.planAdditions(ctx, o, planned)
}

// planAdditions counts, for a dry run, the additions of o to its albums
// that a planned upload (of the source albums in planned) leaves.
func (r *run) planAdditions(ctx context.Context, o *original, planned map[int64]bool) error {
	for _, id := range o.albums {
		if planned[id] {
			continue
		}
		planned[id] = true
		sa := r.plan.albums[id]
		if _, err := r.album(ctx, sa); err != nil {
			return err
		}
		r.note(Event{Kind: Added, Source: o.rec.ID, Title: o.rec.Meta.Title, Album: sa.name}, func(s *Summary) { s.Added++ })
	}
	return nil
}
