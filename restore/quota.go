package restore

import (
	"context"
	"errors"
	"fmt"

	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// thumbEstimate is what a restore budgets for a thumbnail: Ente's web
// app keeps one under 100 KiB.
const thumbEstimate = 100 << 10

// checkQuota refuses to start when the target cannot store need, what is
// to be uploaded: museum's own check lags one request and lets 50 MiB
// through (UP.10), so the budget is made from /users/details/v2 first.
func (r *run) checkQuota(ctx context.Context, need int64) error {
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
