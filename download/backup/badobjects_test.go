package backup

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Three objects that always fail at the connection level (a proxy that
// drops large objects, a store node holding them that resets), while the
// server answers everything else: the run must not stop at them night
// after night with "the server cannot be reached", never reaching the
// seven healthy files listed after them.
func TestThreeObjectsThatResetDoNotStopEveryRun(t *testing.T) {
	e := newEnv(t)
	fs := e.tenFiles()
	bad := map[string]bool{}
	for _, f := range fs[:3] {
		bad[fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID)] = true
	}
	e.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		return enteapitest.ResetAfter(0), bad[route]
	})
	o := e.options()
	o.Concurrency = 1
	var last error
	for night := 1; night <= 3; night++ {
		sum, err := Run(context.Background(), o)
		t.Logf("night %d: new %d, failed %d, err %v", night, sum.New, sum.Failed, err)
		last = err
	}
	for i, f := range fs[3:] {
		e.same(fmt.Sprintf("Trip/%02d.jpg", i+3), f.Plaintext())
	}
	var ue *UnreachableError
	assert.False(t, errors.As(last, &ue), "the server answers: it is not unreachable")
}
