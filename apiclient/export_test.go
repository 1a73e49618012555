package apiclient

import "time"

// SetDrainWait shortens how long a redirect's page is read, for a test.
func SetDrainWait(d time.Duration) (restore func()) {
	old := drainWait
	drainWait = d
	return func() { drainWait = old }
}
