package cmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// globalFlags are the flags every command takes: how much it says, and
// where else its human lines go.
type globalFlags struct {
	quiet   bool
	verbose bool
	logFile string
}

func (g *globalFlags) register(fs *pflag.FlagSet) {
	fs.BoolVarP(&g.quiet, "quiet", "q", false, "print nothing when the command succeeds (for cron, which mails any output); errors still go to stderr")
	fs.BoolVarP(&g.verbose, "verbose", "v", false, "also print every retry and every file's decision")
	fs.StringVar(&g.logFile, "log-file", "", "also append the human lines, timestamped, to this file (created 0600)")
}

func (g *globalFlags) check() error {
	if g.quiet && g.verbose {
		return &usageError{fmt.Errorf("--quiet and --verbose cannot be used together")}
	}
	return nil
}

// humanOut is stdout or stderr as commands see them. With --quiet it holds
// everything back until the command ends, and lets it out only when the
// command fails; with teeLog set, each line also goes to --log-file. JSON
// lines bypass it (see unheld): --quiet is about what a person reads.
type humanOut struct {
	mu     sync.Mutex
	real   io.Writer
	g      *globalFlags
	held   bytes.Buffer
	log    *logFile
	teeBuf []byte
}

func (h *humanOut) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.log != nil {
		h.teeBuf = append(h.teeBuf, b...)
		for {
			i := bytes.IndexByte(h.teeBuf, '\n')
			if i < 0 {
				break
			}
			h.log.line(lastDrawn(string(h.teeBuf[:i])))
			h.teeBuf = h.teeBuf[i+1:]
		}
	}
	if h.g != nil && h.g.quiet {
		return h.held.Write(b)
	}
	return h.real.Write(b)
}

// lastDrawn is what a terminal shows of a line written over itself (a
// progress bar cleared with carriage returns, then a line): what follows
// the last carriage return that something follows.
func lastDrawn(line string) string {
	line = strings.TrimRight(line, "\r")
	return line[strings.LastIndexByte(line, '\r')+1:]
}

// release lets out what --quiet held back (the command failed), or drops it.
func (h *humanOut) release(show bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if show {
		_, _ = h.real.Write(h.held.Bytes())
	}
	h.held.Reset()
}

// logAbout makes the lines w logs from now on name folder (nothing when
// w logs nothing).
func logAbout(w io.Writer, folder string) {
	if h, ok := w.(*humanOut); ok {
		h.mu.Lock()
		lf := h.log
		h.mu.Unlock()
		lf.about(folder)
	}
}

// unheld is w itself, never held back by --quiet: where JSON lines go,
// and the few human lines a quiet run still owes (files deleted on the
// server).
func unheld(w io.Writer) io.Writer {
	if h, ok := w.(*humanOut); ok {
		return h.real
	}
	return w
}

// startLog has non-backup commands copy their human lines to --log-file
// (backup logs its own lines, each once), about command on folder.
func startLog(d deps, command, folder string, outs ...*humanOut) (func(), error) {
	lf, err := openLogFile(d, d.g.logFile, command, folder)
	if err != nil || lf == nil {
		return func() {}, err
	}
	for _, h := range outs {
		h.mu.Lock()
		h.log = lf
		h.mu.Unlock()
	}
	return func() {
		for _, h := range outs {
			h.mu.Lock()
			h.log = nil
			h.mu.Unlock()
		}
		_ = lf.close()
	}, nil
}
