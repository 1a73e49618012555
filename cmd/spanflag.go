package cmd

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/download/span"
)

// spanFlag is a flag that takes a length of time in quak's one syntax
// (span.Parse: 30d, 2w, 36h, 6mo, 20s; a bare m is refused).
type spanFlag struct{ sp *span.Span }

func (f spanFlag) Set(s string) error {
	sp, err := span.Parse(s)
	if err != nil {
		return err
	}
	*f.sp = sp
	return nil
}

func (f spanFlag) String() string { return f.sp.String() }
func (f spanFlag) Type() string   { return "span" }

// spanVar registers a length-of-time flag with a default.
func spanVar(fs *pflag.FlagSet, p *span.Span, name string, def span.Span, usage string) {
	*p = def
	fs.Var(spanFlag{p}, name, usage)
}

// durationFlag is a spanFlag kept as a fixed time.Duration (deadlines, ages).
type durationFlag struct{ d *time.Duration }

func (f durationFlag) Set(s string) error {
	sp, err := span.Parse(s)
	if err != nil {
		return err
	}
	*f.d = sp.Duration()
	return nil
}

func (f durationFlag) String() string { return span.Text(*f.d) }
func (f durationFlag) Type() string   { return "duration" }

// durationVar registers a time.Duration flag read with span.Parse.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(durationFlag{p}, name, usage)
}
