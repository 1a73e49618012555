package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// jsonLines writes one JSON object per line: the machine-readable twin of
// what the printer shows a person. Every object has "type" and "time"
// (RFC 3339, UTC); docs/scripting.md documents each type's fields, which
// only ever grow.
type jsonLines struct {
	mu   sync.Mutex
	w    io.Writer
	now  func() time.Time
	tags map[string]any // fields added to every line
}

func newJSONLines(d deps) *jsonLines {
	now := d.now
	if now == nil {
		now = time.Now
	}
	return &jsonLines{w: unheld(d.stdout), now: now, tags: d.jsonTags}
}

func (j *jsonLines) write(typ string, fields map[string]any) {
	obj := make(map[string]any, len(fields)+len(j.tags)+2)
	for k, v := range fields {
		obj[k] = v
	}
	for k, v := range j.tags {
		obj[k] = v
	}
	obj["type"] = typ
	obj["time"] = j.now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(obj)
	if err != nil {
		return // only plain values go in; cannot happen
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(append(b, '\n'))
}

// errText is an error's message for JSON, or nil.
func errText(err error) any {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return err.Error()
}
