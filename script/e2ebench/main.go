// Command e2ebench measures whole backups: it starts the fake Ente server
// (fakeente) with a generated library in its own process, runs `quak backup`
// as a child process, and prints files/s, MB/s and the child's peak RSS.
// script/bench runs it; see README.md for the figures and targets.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type scenario struct {
	name   string
	files  int
	size   int64
	rerun  bool
	target string
}

func main() {
	quak := flag.String("quak", "bin/quak", "quak binary")
	fake := flag.String("fakeente", "", "fakeente binary")
	flag.Parse()
	if err := run(*quak, *fake); err != nil {
		fmt.Fprintln(os.Stderr, "e2ebench:", err)
		os.Exit(1)
	}
}

func run(quak, fake string) error {
	scenarios := []scenario{
		{name: "2000 x 64 KiB", files: 2000, size: 64 << 10, rerun: true, target: "no-change rerun < 2 s"},
		{name: "4 x 256 MiB", files: 4, size: 256 << 20, target: "peak RSS <= 100 MiB, >= 300 MB/s"},
	}
	fmt.Printf("%-14s %10s %10s %10s %12s %10s %11s %14s   %s\n", "library", "time", "files/s", "MB/s", "peak RSS", "quak CPU", "server CPU", "no-change", "target")
	for _, sc := range scenarios {
		if err := measure(quak, fake, sc); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	return nil
}

func measure(quak, fake string, sc scenario) error {
	work, err := os.MkdirTemp("", "quak-e2ebench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	server := exec.Command(fake, "-addr", "127.0.0.1:0", "-password-file", filepath.Join(work, "pw"),
		"-url-file", filepath.Join(work, "url"), "-library", fmt.Sprintf("bench:%d:%d", sc.files, sc.size))
	if err := server.Start(); err != nil {
		return err
	}
	defer func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		_ = server.Wait()
	}()
	url, err := waitFor(filepath.Join(work, "url"))
	if err != nil {
		return err
	}
	env := append(os.Environ(), "QUAK_CONFIG_DIR="+filepath.Join(work, "config"), "QUAK_ENDPOINT="+url)
	if _, _, err := quakRun(quak, env, "login", "--email", "demo@quak.invalid", "--password-file", filepath.Join(work, "pw")); err != nil {
		return err
	}
	dir := filepath.Join(work, "backup")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	before := cpuOf(server.Process.Pid)
	elapsed, rss, cpu, err := quakRunCPU(quak, env, "backup", "--concurrency", "4", dir)
	if err != nil {
		return err
	}
	serverCPU := cpuOf(server.Process.Pid) - before
	again := "-"
	if sc.rerun {
		t, _, err := quakRun(quak, env, "backup", "--concurrency", "4", dir)
		if err != nil {
			return err
		}
		again = t.Round(time.Millisecond).String()
	}
	mb := float64(int64(sc.files)*sc.size) / 1e6
	fmt.Printf("%-14s %10s %10.0f %10.0f %9.1f MiB %10s %11s %14s   %s\n", sc.name, elapsed.Round(time.Millisecond),
		float64(sc.files)/elapsed.Seconds(), mb/elapsed.Seconds(), float64(rss)/1024, cpu.Round(time.Millisecond),
		serverCPU.Round(time.Millisecond), again, sc.target)
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
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b)), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("the fake server did not start")
}
