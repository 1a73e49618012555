// Command e2ebench measures whole backups: it starts the fake Ente server
// (fakeente) with a generated library in its own process, runs `quak backup`
// as a child process, and prints files/s, MB/s and the child's peak RSS.
// script/bench runs it; docs/performance.md has the figures.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

// backupArgs are added to every quak backup the benchmark runs.
var backupArgs []string

// streams are the ways large files are fetched to compare (-streams): a
// --streams value, or "found" for none (the number found from the link).
// Empty: one way, backupArgs'.
var streams []string

// variant is the --streams of the backup being measured, "" for none.
var variant string

// eachStreams runs measure once for every way of -streams (once when
// none is given), with that --streams added to the backup.
func eachStreams(measure func() error) error {
	if len(streams) == 0 {
		return measure()
	}
	base := backupArgs
	defer func() { backupArgs, variant = base, "" }()
	for _, v := range streams {
		backupArgs, variant = base, v
		if v != "found" {
			backupArgs = append(append([]string(nil), base...), "--streams", v)
		}
		if err := measure(); err != nil {
			return err
		}
	}
	return nil
}

// concurrency is --concurrency for the backups ("0": quak finds it).
var concurrency = "4"

// wan is the fake server's WAN mode ("" for loopback): fakeente flags.
var wan []string

// backupCmd is the command line of a backup of dir.
func backupCmd(dir string) []string {
	return append(append([]string{"backup", "--concurrency", concurrency}, backupArgs...), dir)
}

type scenario struct {
	name   string
	files  int
	size   int64
	rerun  bool
	target string
	asked  bool // run only when -only names it
}

func main() {
	quak := flag.String("quak", "bin/quak", "quak binary")
	fake := flag.String("fakeente", "", "fakeente binary")
	extra := flag.String("backup-args", "", "more quak backup flags, e.g. \"--xmp --sidecars takeout --date-view YYYY/MM\"")
	latency := flag.Duration("latency", 0, "WAN mode: the fake server delays every request by this round trip")
	bw := flag.Int64("bw", 0, "WAN mode: bytes a second per connection")
	only := flag.String("only", "", "run only the libraries whose name contains this")
	ways := flag.String("streams", "", "compare large files fetched these ways: --streams values, or \"found\" (unset), comma-separated")
	cycles := flag.Int("cycles", 0, "instead: run quak backup --every for this many short runs, and print its RSS and open files along the way")
	flag.StringVar(&concurrency, "concurrency", "4", "quak's --concurrency (0: found from the link)")
	flag.Parse()
	backupArgs = strings.Fields(*extra)
	if *cycles > 0 {
		if err := runCycles(*quak, *fake, *cycles); err != nil {
			fmt.Fprintln(os.Stderr, "e2ebench:", err)
			os.Exit(1)
		}
		return
	}
	if *ways != "" {
		streams = strings.Split(*ways, ",")
	}
	if *latency > 0 || *bw > 0 {
		wan = []string{"-latency", latency.String(), "-bw", fmt.Sprint(*bw)}
		if err := runWAN(*quak, *fake, *latency, *bw, *only); err != nil {
			fmt.Fprintln(os.Stderr, "e2ebench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*quak, *fake, *only); err != nil {
		fmt.Fprintln(os.Stderr, "e2ebench:", err)
		os.Exit(1)
	}
}

func run(quak, fake, only string) error {
	scenarios := []scenario{
		{name: "2000 x 16 KiB", files: 2000, size: 16 << 10, rerun: true, target: "bytes written per byte saved <= 1.15"},
		{name: "2000 x 64 KiB", files: 2000, size: 64 << 10, rerun: true, target: "no-change rerun < 2 s"},
		{name: "4 x 256 MiB", files: 4, size: 256 << 20, target: "peak RSS <= 100 MiB, >= 300 MB/s"},
		{name: "200 x 1 MiB", files: 200, size: 1 << 20, target: "with -concurrency 0: peak RSS <= 28 MiB", asked: true},
		{name: "10k x 1 KiB", files: 10_000, size: 1 << 10, rerun: true, target: "peak RSS flat with the library"},
		{name: "50k x 1 KiB", files: 50_000, size: 1 << 10, rerun: true, target: "peak RSS flat with the library"},
		{name: "100k x 1 KiB", files: 100_000, size: 1 << 10, rerun: true, target: "peak RSS <= 100 MiB, rerun <= 2 s"},
	}
	fmt.Printf("%-14s %10s %10s %10s %12s %10s %11s %14s %14s %11s %14s   %s\n", "library", "time", "files/s", "MB/s", "peak RSS", "quak CPU",
		"server CPU", "no-change", "no-change RSS", "CPU s/GiB", "syscalls/file", "target")
	for _, sc := range scenarios {
		if only != "" && !strings.Contains(sc.name, only) || only == "" && sc.asked {
			continue
		}
		if err := eachStreams(func() error { return measure(quak, fake, sc) }); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	// Measured last: its buffers would otherwise count in the children's
	// peak RSS, which Linux reports from the moment of fork.
	fmt.Printf("\ndecrypt + hash floor, in memory on one core, this run: %.2f CPU s/GiB\n", decryptHashFloor())
	return nil
}

// decryptHashFloor is the CPU the unavoidable work costs per GiB: opening
// Ente's 4 MiB secretstream chunks and hashing the plaintext with
// BLAKE2b-512, in memory, measured now on this machine.
func decryptHashFloor() float64 {
	const size = 256 << 20
	key, header := make([]byte, 32), make([]byte, 24)
	plain := make([]byte, size)
	for i := range plain {
		plain[i] = byte(i * 131)
	}
	ct, err := secretstream.Encrypt(key, header, plain)
	if err != nil {
		panic(err)
	}
	start := cpuNow()
	for i := 0; i < 2; i++ {
		r, err := secretstream.NewReader(key, header, bytes.NewReader(ct), int64(len(ct)))
		if err != nil {
			panic(err)
		}
		if _, err := r.WriteTo(keys.NewHash()); err != nil {
			panic(err)
		}
	}
	return (cpuNow() - start).Seconds() / (2 * float64(size) / (1 << 30))
}

// cpuNow is this process's CPU time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syscallsOf runs a fresh backup under strace -c and returns the system
// calls it made, or -1 without strace.
func syscallsOf(quak string, env []string, dir string) int {
	if _, err := exec.LookPath("strace"); err != nil {
		return -1
	}
	out := dir + ".strace"
	cmd := exec.Command("strace", append([]string{"-f", "-c", "-q", "-o", out, quak}, backupCmd(dir)...)...)
	cmd.Env = env
	if err := cmd.Run(); err != nil {
		return -1
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[len(f)-1] == "total" {
			var n int
			if _, err := fmt.Sscan(f[3], &n); err == nil {
				return n
			}
		}
	}
	return -1
}

func measure(quak, fake string, sc scenario) error {
	work, err := os.MkdirTemp("", "quak-e2ebench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	server, env, err := serve(quak, fake, work, sc)
	if err != nil {
		return err
	}
	defer func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		_ = server.Wait()
	}()
	dir := filepath.Join(work, "backup")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	before := cpuOf(server.Process.Pid)
	elapsed, rss, cpu, err := quakRunCPU(quak, env, backupCmd(dir)...)
	if err != nil {
		return err
	}
	written := lastWritten
	serverCPU := cpuOf(server.Process.Pid) - before
	again, againRSS := "-", "-"
	if sc.rerun {
		t, rss, err := quakRun(quak, env, backupCmd(dir)...)
		if err != nil {
			return err
		}
		again, againRSS = t.Round(time.Millisecond).String(), fmt.Sprintf("%.1f MiB", float64(rss)/1024)
	}
	mb := float64(int64(sc.files)*sc.size) / 1e6
	gib := float64(int64(sc.files)*sc.size) / (1 << 30)
	traced := filepath.Join(work, "traced")
	if err := os.Mkdir(traced, 0o755); err != nil {
		return err
	}
	lastElapsed = elapsed
	calls := "-"
	if wan != nil {
		fmt.Printf("  --concurrency %s: ", concurrency)
	} else if sc.files > 5000 {
		// A traced backup of this many files would take minutes more.
	} else if n := syscallsOf(quak, env, traced); n >= 0 {
		calls = fmt.Sprintf("%.1f", float64(n)/float64(sc.files))
	}
	name := sc.name
	if variant != "" {
		name += " " + variant
	}
	fmt.Printf("%-14s %10s %10.0f %10.0f %9.1f MiB %10s %11s %14s %14s %11.2f %14s   %s\n", name, elapsed.Round(time.Millisecond),
		float64(sc.files)/elapsed.Seconds(), mb/elapsed.Seconds(), float64(rss)/1024, cpu.Round(time.Millisecond),
		serverCPU.Round(time.Millisecond), again, againRSS, cpu.Seconds()/gib, calls, sc.target)
	if saved := int64(sc.files) * sc.size; saved > 0 {
		fmt.Printf("%14s bytes written per byte saved: %.2f\n", "", float64(written)/float64(saved))
	}
	return nil
}

// serve starts the fake server with sc's library and logs quak in to it,
// with quak's configuration in work. The caller stops the server.
func serve(quak, fake, work string, sc scenario) (*exec.Cmd, []string, error) {
	server := exec.Command(fake, append([]string{"-addr", "127.0.0.1:0", "-password-file", filepath.Join(work, "pw"),
		"-url-file", filepath.Join(work, "url"), "-library", fmt.Sprintf("bench:%d:%d", sc.files, sc.size)}, wan...)...)
	if err := server.Start(); err != nil {
		return nil, nil, err
	}
	url, err := waitFor(filepath.Join(work, "url"))
	if err == nil {
		env := append(os.Environ(), "QUAK_CONFIG_DIR="+filepath.Join(work, "config"), "QUAK_ENDPOINT="+url)
		_, _, err = quakRun(quak, env, "login", "--email", "demo@quak.invalid", "--password-file", filepath.Join(work, "pw"))
		if err == nil {
			return server, env, nil
		}
	}
	_ = server.Process.Signal(syscall.SIGTERM)
	_ = server.Wait()
	return nil, nil, err
}

// lastElapsed is the wall time of the last measured backup.
var lastElapsed time.Duration

// lastWritten is what the last quak run wrote to disk (its rusage's
// blocks out, 512 bytes each): data, sidecars, state and fsyncs.
var lastWritten int64

// runWAN backs up the three libraries through the fake server's
// WAN mode, with quak's own concurrency and with fixed ones, and prints
// each time against the time the link allows: for small files, the best
// fixed concurrency's; for large ones, one stream per file at bw.
func runWAN(quak, fake string, latency time.Duration, bw int64, only string) error {
	fmt.Printf("WAN mode: %s a request, %.0f MB/s per connection\n", latency, float64(bw)/1e6)
	libs := []scenario{
		{name: "2000 x 16 KiB", files: 2000, size: 16 << 10},
		{name: "200 x 1 MiB", files: 200, size: 1 << 20},
		{name: "1 x 256 MiB", files: 1, size: 256 << 20},
		{name: "4 x 256 MiB", files: 4, size: 256 << 20},
	}
	fmt.Printf("%-14s %-14s %10s %10s %9s\n", "library", "--concurrency", "time", "peak RSS", "ratio")
	for _, sc := range libs {
		if only != "" && !strings.Contains(sc.name, only) {
			continue
		}
		fixed := []string{"4", "16", "32"}
		if sc.size >= 64<<20 {
			fixed = nil
		}
		best := time.Duration(0)
		for _, c := range fixed {
			concurrency = c
			if err := measure(quak, fake, sc); err != nil {
				return err
			}
			if best == 0 || lastElapsed < best {
				best = lastElapsed
			}
		}
		concurrency = "0"
		floor, what := best, "the best fixed concurrency"
		if fixed == nil {
			floor = time.Duration(float64(sc.size) / float64(bw) * float64(time.Second))
			what = "one stream's time at the link's rate"
		}
		err := eachStreams(func() error {
			if err := measure(quak, fake, sc); err != nil {
				return err
			}
			fmt.Printf("  %s: quak's own concurrency took %.2f x %s (%s)\n", sc.name, lastElapsed.Seconds()/floor.Seconds(), what, floor.Round(time.Millisecond))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// quakRun runs quak and returns its wall time and peak RSS in KiB.
func quakRun(quak string, env []string, args ...string) (time.Duration, int64, error) {
	d, rss, _, err := quakRunCPU(quak, env, args...)
	return d, rss, err
}

// quakRunCPU also returns the CPU time quak used.
func quakRunCPU(quak string, env []string, args ...string) (time.Duration, int64, time.Duration, error) {
	cmd := exec.Command(quak, args...)
	cmd.Env = env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("quak %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
		lastWritten = ru.Oublock * 512
	}
	return elapsed, rss, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// cpuOf is the CPU time a running process has used so far (Linux /proc; 0
// elsewhere), with the usual 100 ticks a second.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	var utime, stime int64
	_, _ = fmt.Sscan(fields[11], &utime)
	_, _ = fmt.Sscan(fields[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func waitFor(path string) (string, error) {
	for i := 0; i < 6000; i++ { // 10 minutes: a library of 100,000 files takes minutes to make
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b)), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("the fake server did not start")
}

// cycleEvery is the --every of the cycles benchmark: short, so that 500
// runs take a minute or two, and long enough that each measurement falls
// between two runs.
const cycleEvery = "100ms"

// runCycles runs one quak backup --every against the fake server with a
// small library, and after the 1st, ..., n-th run (when quak says when the
// next one starts, with nothing in flight) reads its resident memory and
// open files from /proc.
func runCycles(quak, fake string, n int) error {
	work, err := os.MkdirTemp("", "quak-e2ebench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	sc := scenario{files: 20, size: 4 << 10}
	server, env, err := serve(quak, fake, work, sc)
	if err != nil {
		return err
	}
	defer func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		_ = server.Wait()
	}()
	dir := filepath.Join(work, "backup")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(quak, "backup", "--every", cycleEvery, dir)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	fmt.Printf("quak backup --every %s, %d x %d KiB, no change after the first run:\n", cycleEvery, sc.files, sc.size>>10)
	fmt.Printf("%8s %10s %10s %10s\n", "after", "RSS", "peak RSS", "open fds")
	marks := map[int]bool{1: true, 10: true, 100: true, n / 2: true, n: true}
	sc2 := bufio.NewScanner(stderr)
	runs := 0
	for runs < n && sc2.Scan() {
		line := sc2.Text()
		if !strings.HasPrefix(line, "quak: next run at ") {
			if strings.HasPrefix(line, "quak: error:") {
				return fmt.Errorf("run %d: %s", runs+1, line)
			}
			continue
		}
		runs++
		if !marks[runs] {
			continue
		}
		rss, peak := procStatus(cmd.Process.Pid, "VmRSS:"), procStatus(cmd.Process.Pid, "VmHWM:")
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			return err
		}
		fmt.Printf("%4d runs %7.1f MiB %6.1f MiB %10d\n", runs, float64(rss)/1024, float64(peak)/1024, len(fds))
	}
	if runs < n {
		return fmt.Errorf("quak stopped after %d runs", runs)
	}
	return nil
}

// procStatus is a "NAME: N kB" field of /proc/PID/status, in KiB.
func procStatus(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			var kb int64
			_, _ = fmt.Sscan(f[1], &kb)
			return kb
		}
	}
	return -1
}
