package apiclient

import (
	"io"
	"strings"
	"testing"
	"time"
)

func newIdleBody(s string) *idleBody {
	return &idleBody{rc: io.NopCloser(strings.NewReader(s)), cancel: func() {}, idle: time.Minute, newTimer: RealTimer}
}

// A body read and closed gives its read buffer back for the next answer;
// one closed unread gives nothing back (and no empty buffer to the pool).
func TestABodyGivesItsReadBufferBack(t *testing.T) {
	back := false
	for range 20 { // the pool may drop what it is given (a quarter of it under -race)
		b := newIdleBody("photo")
		if _, err := io.ReadAll(b); err != nil {
			t.Fatal(err)
		}
		held := b.buf
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if p := idleBuffers.Get().(*[]byte); p == held {
			back = true
			break
		}
	}
	if !back {
		t.Fatal("a closed body's read buffer never came back")
	}
	for range 20 {
		if err := newIdleBody("unread").Close(); err != nil {
			t.Fatal(err)
		}
		if p := idleBuffers.Get().(*[]byte); p == nil || len(*p) != maxIdleRead {
			t.Fatalf("the pool handed out %v after a body closed unread", p)
		}
	}
}
