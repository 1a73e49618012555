package enteapitest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAPacedBodyBanksNoTimeItSatUnread(t *testing.T) {
	const bw = 1 << 20 // 1 MiB/s: paceSlack is 125 ms of it
	t0 := time.Unix(1000, 0)
	// On time: 512 KiB out after 100 ms waits until 500 ms.
	wait, start := paceWait(512<<10, bw, t0, t0.Add(100*time.Millisecond))
	assert.Equal(t, 400*time.Millisecond, wait)
	assert.Equal(t, t0, start)
	// Behind by no more than the slack: sent at once, the start kept.
	wait, start = paceWait(512<<10, bw, t0, t0.Add(600*time.Millisecond))
	assert.Equal(t, -100*time.Millisecond, wait)
	assert.Equal(t, t0, start)
	// Unread for 10 s: no more than the slack ahead of the link from now.
	wait, start = paceWait(512<<10, bw, t0, t0.Add(10*time.Second))
	assert.Equal(t, -125*time.Millisecond, wait)
	assert.Equal(t, t0.Add(10*time.Second-625*time.Millisecond), start)
	// The next 1 MiB then takes a second, less the slack.
	wait, _ = paceWait(512<<10+1<<20, bw, start, t0.Add(10*time.Second))
	assert.Equal(t, 875*time.Millisecond, wait)
}
