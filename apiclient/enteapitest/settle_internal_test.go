package enteapitest

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Settle ends a request the store is still handling (a stalled one) and
// returns once no handler runs; a request answered before does not hold it
// up. Every wait here is bounded.
func TestSettleWaitsForTheStoresHandlers(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	s.Inject("GET /store/settle", Pass(), StallHeaders())
	get := func() error {
		resp, err := http.Get(s.Store.URL + "/store/settle")
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	require.NoError(t, get(), "the first request is answered")

	ended := make(chan error, 1)
	go func() { ended <- get() }()
	select {
	case <-s.Stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("the second request never stalled")
	}
	s.busy.mu.Lock()
	assert.Equal(t, 1, s.busy.handling, "the stalled request is being handled")
	s.busy.mu.Unlock()

	settled := make(chan struct{})
	go func() {
		s.Settle()
		close(settled)
	}()
	select {
	case <-settled:
	case <-time.After(30 * time.Second):
		t.Fatal("Settle did not return")
	}
	s.busy.mu.Lock()
	assert.Zero(t, s.busy.handling, "a handler still runs after Settle")
	s.busy.mu.Unlock()
	select {
	case err := <-ended:
		assert.Error(t, err, "the stalled request's connection was closed")
	case <-time.After(30 * time.Second):
		t.Fatal("the stalled request never ended")
	}
}
