package thumbnails

import (
	"context"
	"fmt"

	"github.com/quak-photos/quak/retry"
)

// atLeast reports whether file id's thumbnail object, as museum records it
// (object_keys.size), is at least t bytes. That recorded size is the only
// one PUT /files/thumbnail compares a new thumbnail against, and no API
// returns it directly: files.info's thumbSize is the size at upload, never
// updated when a thumbnail is replaced. GET /files/large-thumbnails lists
// the files whose recorded size is at least a threshold, so two questions
// confirm a guess and a binary search finds any other size. Answers are
// not kept: each lists many files, and memory stays flat.
func (r *run) atLeast(ctx context.Context, id, t int64) (bool, error) {
	var ids []int64
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		var err error
		ids, err = r.o.Client.LargeThumbnails(ctx, t)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("asking museum for recorded thumbnail sizes: %w", err)
	}
	for _, x := range ids {
		if x == id {
			return true, nil
		}
	}
	return false, nil
}

// recordedSize is c's thumbnail size as museum records it (0 when museum
// lists no thumbnail object for it), learned once per run: first the
// guess from files.info, then a binary search.
func (r *run) recordedSize(ctx context.Context, c *candidate) (int64, error) {
	if c.budget >= 0 {
		return c.budget, nil
	}
	id := c.item.FileID
	if g := c.hint; g > 0 {
		in, err := r.atLeast(ctx, id, g)
		if err != nil {
			return 0, err
		}
		above, err := r.atLeast(ctx, id, g+1)
		if err != nil {
			return 0, err
		}
		if in && !above {
			c.budget = g
			return g, nil
		}
	}
	// Largest t with atLeast(t): atLeast(lo) holds (or lo is 0), and
	// atLeast(hi+1) does not.
	lo, hi := int64(0), int64(maxThumbnail)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		in, err := r.atLeast(ctx, id, mid)
		if err != nil {
			return 0, err
		}
		if in {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	c.budget = lo
	return lo, nil
}
