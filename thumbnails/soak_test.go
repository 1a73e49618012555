package thumbnails

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Randomized faults on every route, runs repeated until one is healthy:
// never an exact repeat of a commit (which would wedge museum), never a
// healthy thumbnail replaced, and in the end every thumbnail reads ok.
func TestChaosSoakNeverRepeatsACommit(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			fx := newFix(t)
			var broken, healthy []*enteapitest.File
			for i := 0; i < 4; i++ {
				broken = append(broken, fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("l%d.jpg", i),
					Data: jpegOf(t, photo(300, 200, byte(i))), LostThumbnail: true, Thumbnail: make([]byte, roomy)}))
				broken = append(broken, fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("c%d.jpg", i),
					Data: jpegOf(t, photo(200, 300, byte(i))), CorruptThumbnail: true, Thumbnail: make([]byte, roomy)}))
				healthy = append(healthy, fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("h%d.jpg", i),
					Data: jpegOf(t, photo(200, 200, byte(i)))}))
			}
			headers := map[int64][]byte{}
			for _, f := range healthy {
				headers[f.ID] = f.ThumbnailHeader()
			}
			rng := rand.New(rand.NewSource(seed))
			var mu sync.Mutex
			no404 := map[string]bool{} // at most one 404 per object: two in a row are a loss
			fx.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
				mu.Lock()
				defer mu.Unlock()
				r := rng.Float64()
				switch {
				case r < 0.12:
					return enteapitest.Status(503), true
				case r < 0.2 && route == "PUT /files/thumbnail":
					return enteapitest.LoseResponse(), true
				case r < 0.26 && strings.HasPrefix(route, "GET /store/") && !no404[route]:
					no404[route] = true
					return enteapitest.Status(404), true
				case r < 0.3 && strings.HasPrefix(route, "GET /store/"):
					return enteapitest.CutAfter(64), true
				case r < 0.33:
					return enteapitest.ResetAfter(0), true
				}
				return enteapitest.Fault{}, false
			})
			// A wedged museum would hang the next commit: restart it and fail.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for {
					select {
					case what := <-fx.s.Stalled:
						if what == "HUNG PUT /files/thumbnail" {
							fx.s.Restart()
						}
					case <-ctx.Done():
						return
					}
				}
			}()
			healthyRun := false
			for run := 0; run < 12 && !healthyRun; run++ {
				sum, err := Run(context.Background(), fx.options(t))
				if err == nil {
					healthyRun = sum.Healthy()
				}
			}
			// Without faults, whatever chaos left broken is repaired by the next
			// run, and the one after finds everything ok.
			fx.s.SetChaos(nil)
			fx.run(t, fx.options(t))
			fx.events = nil
			sum := fx.run(t, fx.options(t))
			assert.Equal(t, map[Class]int{OK: len(broken) + len(healthy)}, sum.Classes, "healthy run reached: %v; %+v", healthyRun, fx.events)
			assert.Zero(t, fx.s.ExactRepeats())
			assert.Zero(t, fx.s.Hung())
			for _, f := range healthy {
				assert.True(t, bytes.Equal(headers[f.ID], f.ThumbnailHeader()), "healthy file %d was replaced", f.ID)
			}
			for _, f := range broken {
				require.True(t, IsImage(newThumbnail(t, f)))
			}
		})
	}
}
