package restore

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// thumbEstimate is what a restore budgets for a thumbnail: Ente's web
// app keeps one under 100 KiB.
const thumbEstimate = 100 << 10

// zipEstimate is what a live photo's archive adds to its two parts.
const zipEstimate = 1 << 10

// estimate is the ciphertext an original's upload stores: its parts (in
// an archive for a live photo) and a thumbnail.
func (r *run) estimate(o *original) int64 {
	var n int64
	if o.src != nil {
		for _, p := range o.src.Parts {
			n += p.Size
		}
	}
	for _, p := range o.parts {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	if len(o.parts) > 1 || o.src != nil && len(o.src.Parts) > 1 {
		n += zipEstimate
	}
	return secretstream.CiphertextSize(n) + thumbEstimate
}

// checkQuota refuses to start when the target cannot store what is to be
// uploaded: museum's own check lags one request and lets 50 MiB through
// (UP.10), so the budget is made from /users/details/v2 first.
func (r *run) checkQuota(ctx context.Context) error {
	var need int64
	counted := map[string]bool{} // one upload per content
	for _, o := range r.plan.files {
		key := contentKey(o.hash(), o.rec.Meta.FileType, o.rec.Meta.Title)
		if o.src != nil && o.hash() == "" {
			key = "import/" + o.src.Key
		}
		if r.tgt.file(key) != nil || counted[key] || r.likelyPresent(o) {
			continue
		}
		counted[key] = true
		if r.j != nil {
			in, err := r.j.Intent(o.rec.ID)
			if err != nil {
				return err
			}
			if in != nil && in.FileID != 0 {
				continue
			}
		}
		need += r.estimate(o)
	}
	if need == 0 {
		return nil
	}
	var room int64
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		d, err := r.o.Target.Client.UserDetails(ctx)
		if err == nil {
			room = d.Headroom(r.o.Now())
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("reading the target's storage: %w", quotaRefusal(err))
	}
	if need > room {
		return &QuotaError{Need: need, Headroom: room}
	}
	return nil
}

// quotaRefusal makes museum's 402 (plan expired) and 426 (storage full)
// a *QuotaError, and leaves other errors as they are.
func quotaRefusal(err error) error {
	var ae *errs.ApiError
	if errors.As(err, &ae) && (ae.Status == 402 || ae.Status == 426) {
		return &QuotaError{Err: err}
	}
	return err
}
