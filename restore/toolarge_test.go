package restore

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient"
)

// An original is too large for Ente beyond 10 GiB, in one part or two,
// and so is a size no file has (negative, or near int64's end).
func TestTooLarge(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		want  bool
	}{
		{[]int64{apiclient.MaxObjectSize}, false},
		{[]int64{apiclient.MaxObjectSize + 1}, true},
		{[]int64{apiclient.MaxObjectSize / 2, apiclient.MaxObjectSize / 2}, false},
		{[]int64{apiclient.MaxObjectSize / 2, apiclient.MaxObjectSize/2 + 1}, true},
		{[]int64{-1}, true},
		{[]int64{0}, false},
		{[]int64{1, math.MaxInt64}, true},
		{[]int64{math.MaxInt64, math.MaxInt64}, true},
	} {
		src := &Original{}
		for _, n := range c.sizes {
			src.Parts = append(src.Parts, Part{Size: n})
		}
		assert.Equal(t, c.want, tooLarge(src), "%v", c.sizes)
	}
}
