//go:build unix

package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
)

// TestKilledDuringADownload kills a real quak process (SIGKILL: no cleanup
// runs) in the middle of a file, then checks that no half file sits at its
// final name and that the next run removes the leftover and saves it.
func TestKilledDuringADownload(t *testing.T) {
	bin := buildQuak(t)
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("Videos")
	f := a.AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 7})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID))

	signalWhenStalled(t, bin, e, s, syscall.SIGKILL, "backup", "--streams", ranges, dir) // in the middle of the file

	final := filepath.Join(dir, "Videos", "long.mp4")
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Fatalf("a killed download left something at its final name: %v", err)
	}
	if n := countTemps(t, dir); n == 0 {
		t.Fatal("expected the killed run's temp file (the test would prove nothing otherwise)")
	}

	code, out, errOut := e.run("backup", dir)
	if code != exitOK {
		t.Fatalf("rerun: code %d\n%s%s", code, out, errOut)
	}
	if n := countTemps(t, dir); n != 0 {
		t.Fatalf("%d temp files left after the rerun", n)
	}
	b, err := os.ReadFile(final)
	if err != nil || string(b) != string(f.Plaintext()) {
		t.Fatalf("rerun did not save the file whole: %v", err)
	}
}

// SIGINT (Ctrl-C) and SIGTERM each stop a run cleanly: the transfer is
// aborted, no half file has a final name, and the exit code names the
// signal. What the download had is kept in quak's temp area only, and the
// next run takes it up (asks for the rest), ends byte-exact and leaves no
// temp file.
func TestASignalStopsARunCleanly(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  os.Signal
		code int
	}{
		{"SIGINT", os.Interrupt, exitInterrupt},
		{"SIGTERM", syscall.SIGTERM, exitTerminated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := buildQuak(t)
			e, s, u, dir := loggedIn(t)
			f := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 8})
			stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID))
			if code, stderr := signalWhenStalled(t, bin, e, s, tc.sig, "backup", "--streams", ranges, dir); code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if n := countTemps(t, folder.At(dir).Temp()); n != countTemps(t, dir) {
				t.Fatalf("%d temp files left outside quak's temp area after %s", countTemps(t, dir)-n, tc.name)
			}
			// The record says what the exit says.
			if last, err := folder.At(dir).LastRun(); err != nil || last.ExitCode != tc.code || last.Outcome != folder.OutcomeInterrupted {
				t.Fatalf("last-run.json after %s: %+v, %v", tc.name, last, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "Videos", "long.mp4")); !os.IsNotExist(err) {
				t.Fatalf("an interrupted download has a final name: %v", err)
			}
			route := fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID)
			before := len(s.Ranges(route))
			s.ClearFaults(route)
			if code, out, errOut := e.run("backup", dir); code != exitOK {
				t.Fatalf("rerun: code %d\n%s%s", code, out, errOut)
			}
			if n := countTemps(t, dir); n != 0 {
				t.Fatalf("%d temp files left after the rerun", n)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "Videos", "long.mp4")); err != nil || string(b) != string(f.Plaintext()) {
				t.Fatalf("rerun did not save the file whole: %v", err)
			}
			for _, rg := range s.Ranges(route)[before:] {
				if strings.HasPrefix(rg, "bytes=0-") || rg == "" {
					t.Fatalf("the rerun started the file over (%q): what the stopped run had was lost", rg)
				}
			}
		})
	}
}

// ranges is --streams for a run stallMidFile stalls: ranges from the file's
// first chunk on (a number found from the link starts at one stream).
var ranges = strconv.Itoa(download.DefaultStreams)

// stallMidFile stalls the download of a large file at its tenth range.
// The file comes as ranges into download.DefaultStreams+1 buffers, so the
// first nine ranges can arrive before quak writes anything; a tenth is
// asked for only once quak has read the first range from its ring.
func stallMidFile(s *enteapitest.Server, route string) {
	first := make([]enteapitest.Fault, download.DefaultStreams+1)
	for i := range first {
		first[i] = enteapitest.Pass()
	}
	s.Inject(route, append(first, enteapitest.StallAfter(1<<20))...)
}

// signalWhenStalled runs the quak binary with args under e's config, sends
// sig once the fake server holds one of its requests stalled, and returns
// its exit code and stderr; every wait is bounded.
func signalWhenStalled(t *testing.T, bin string, e *env, s *enteapitest.Server, sig os.Signal, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "QUAK_CONFIG_DIR="+e.vars["QUAK_CONFIG_DIR"])
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStalled(t, s)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit code below says how it ended
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("quak did not stop on %v", sig)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestMain fails the run when a test left anything in the package
// directory (every test writes under t.TempDir()), and removes it so it
// cannot be committed.
func TestMain(m *testing.M) {
	before := packageDirEntries()
	code := m.Run()
	if builtQuak != "" {
		_ = os.RemoveAll(filepath.Dir(builtQuak))
	}
	for name := range packageDirEntries() {
		if !before[name] {
			fmt.Fprintf(os.Stderr, "a test left %s in the package directory; tests write under t.TempDir()\n", name)
			_ = os.RemoveAll(name)
			code = 1
		}
	}
	os.Exit(code)
}

func packageDirEntries() map[string]bool {
	es, err := os.ReadDir(".")
	if err != nil {
		panic(err)
	}
	names := map[string]bool{}
	for _, e := range es {
		names[e.Name()] = true
	}
	return names
}

var (
	buildOnce sync.Once
	builtQuak string
	buildErr  error
)

// buildQuak builds the quak binary once per test run.
func buildQuak(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the quak binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "quak-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtQuak = filepath.Join(dir, "quak")
		if out, err := exec.Command("go", "build", "-o", builtQuak, "github.com/quak-photos/quak").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtQuak
}

func countTemps(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), durable.TempPrefix) {
			n++
		}
		return nil
	})
	return n
}
