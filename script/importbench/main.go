// Command importbench measures `quak import takeout` on one generated
// Takeout part of a given size: wall time, quak's peak RSS, and the bytes
// quak read from its files per byte of the part (its passes over it). It
// runs the import twice (the second uploads nothing). Against the fake
// server (-fakeente) it logs in to the demo account itself; against a real
// server, give -config: a QUAK_CONFIG_DIR where quak is logged in.
// docs/performance.md has the figures.
package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	tt "github.com/quak-photos/quak/restore/takeout/takeouttest"
)

func main() {
	quak := flag.String("quak", "bin/quak", "quak binary")
	fake := flag.String("fakeente", "", "fakeente binary: import into its demo account")
	config := flag.String("config", "", "QUAK_CONFIG_DIR of a quak logged in to the account to import into (instead of -fakeente)")
	size := flag.String("size", "1G", "the part's size (K, M, G suffixes)")
	kind := flag.String("kind", "zip", "zip or tgz")
	work := flag.String("work", "", "folder for the part (default: a temp folder, removed after); an existing part of that size is used again")
	conc := flag.Int("concurrency", 4, "quak's --concurrency")
	flag.Parse()
	n, err := parseSize(*size)
	if err == nil {
		err = run(*quak, *fake, *config, *work, *kind, n, *conc)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := map[byte]int64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
	m := int64(1)
	if k, ok := mult[s[len(s)-1]]; ok {
		m, s = k, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	return int64(v * float64(m)), err
}

func run(quak, fake, config, work, kind string, size int64, conc int) error {
	if work == "" {
		dir, err := os.MkdirTemp("", "importbench-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		work = dir
	}
	part := filepath.Join(work, fmt.Sprintf("takeout-bench-%d.%s", size, kind))
	if fi, err := os.Stat(part); err != nil || fi.Size() < size {
		start := time.Now()
		if err := generate(part, kind, size); err != nil {
			return err
		}
		fmt.Printf("generated %s in %s\n", part, time.Since(start).Round(time.Second))
	}
	fi, err := os.Stat(part)
	if err != nil {
		return err
	}
	env := os.Environ()
	if fake != "" {
		server, fenv, err := serveFake(quak, fake, work)
		if err != nil {
			return err
		}
		defer func() { _ = server.Process.Signal(syscall.SIGTERM); _ = server.Wait() }()
		env = fenv
	} else if config != "" {
		env = append(env, "QUAK_CONFIG_DIR="+config)
	} else {
		return fmt.Errorf("give -fakeente or -config")
	}
	fmt.Printf("%-6s %-10s %10s %10s %8s  %s\n", "run", "part", "time", "peak RSS", "passes", "summary")
	for _, name := range []string{"first", "second"} {
		r, err := measure(quak, env, "import", "takeout", "--concurrency", strconv.Itoa(conc), part)
		if err != nil {
			return err
		}
		fmt.Printf("%-6s %-10s %10s %7.1f MiB %8.3f  %s\n", name, human(fi.Size()), r.elapsed.Round(time.Millisecond),
			float64(r.rss)/1024, float64(r.read)/float64(fi.Size()), strings.TrimSpace(r.summary))
	}
	return nil
}

type result struct {
	elapsed time.Duration
	rss     int64 // KiB, sampled every 20 ms
	read    int64 // bytes read from files and sockets (rchar), last seen
	summary string
}

// measure runs quak and samples what it read (/proc/PID/io's rchar) until
// it ends.
func measure(quak string, env []string, args ...string) (*result, error) {
	cmd := exec.Command(quak, args...)
	cmd.Env = env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &result{}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			r.elapsed = time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("quak %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
			}
			r.summary = lastLine(out.String())
			return r, nil
		case <-tick.C:
			if n := rchar(cmd.Process.Pid); n > r.read {
				r.read = n
			}
			// Not the rusage's maxrss: a child forked from this process
			// counts this process's memory until it execs.
			if n := hwm(cmd.Process.Pid); n > r.rss {
				r.rss = n
			}
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// rchar is what a process read so far, from files and sockets.
func rchar(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// hwm is a process's peak RSS since it started its program, in KiB
// (/proc/PID/status VmHWM).
func hwm(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func human(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// serveFake starts the fake server and logs quak in to its demo account.
func serveFake(quak, fake, work string) (*exec.Cmd, []string, error) {
	_ = os.Remove(filepath.Join(work, "url"))
	server := exec.Command(fake, "-addr", "127.0.0.1:0", "-password-file", filepath.Join(work, "pw"), "-url-file", filepath.Join(work, "url"))
	if err := server.Start(); err != nil {
		return nil, nil, err
	}
	var url string
	for i := 0; i < 1000 && url == ""; i++ {
		b, _ := os.ReadFile(filepath.Join(work, "url"))
		url = strings.TrimSpace(string(b))
		time.Sleep(10 * time.Millisecond)
	}
	env := append(os.Environ(), "QUAK_CONFIG_DIR="+filepath.Join(work, "config"), "QUAK_ENDPOINT="+url)
	_ = os.RemoveAll(filepath.Join(work, "config"))
	login := exec.Command(quak, "login", "--email", "demo@quak.invalid", "--password-file", filepath.Join(work, "pw"))
	login.Env = env
	if out, err := login.CombinedOutput(); err != nil {
		_ = server.Process.Kill()
		return nil, nil, fmt.Errorf("login: %w\n%s", err, out)
	}
	return server, env, nil
}

// generate writes a Takeout part of about size bytes: photos of 1 to 8
// MiB (every fourth in an album too, every twentieth a live photo with a
// short video), and every fiftieth file a video of 50 to 300 MiB, each with
// its JSON; media stored as Google stores them, bytes no compressor
// shrinks.
func generate(path, kind string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := newPartWriter(f, kind)
	rng := rand.New(rand.NewPCG(uint64(size), 39))
	var total int64
	when := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := 0; total < size; i++ {
		when += 3600
		year := time.Unix(when, 0).UTC().Year()
		folder := fmt.Sprintf("%sPhotos from %d/", tt.GP, year)
		var name string
		var data []byte
		if i%50 == 49 {
			name = fmt.Sprintf("VID_%05d.mp4", i)
			data = tt.Movie(time.Unix(when, 0), 50<<20+rng.IntN(250<<20), i%100 == 99, byte(i))
		} else {
			name = fmt.Sprintf("IMG_%05d.jpg", i)
			data = append(tt.JPEG(byte(i)), tt.Noise(1<<20+rng.IntN(7<<20), byte(i))...)
		}
		meta := tt.PhotoJSON(name, when, map[string]any{"favorited": i%10 == 0})
		for _, file := range []tt.File{{Name: folder + name, Data: data}, {Name: folder + name + ".json", Data: meta}} {
			if err := w.add(file); err != nil {
				return err
			}
		}
		total += int64(len(data))
		if i%4 == 0 {
			album := fmt.Sprintf("%sAlbum %d/", tt.GP, i/100)
			for _, file := range []tt.File{{Name: album + name, Data: data}, {Name: album + name + ".json", Data: meta},
				{Name: album + "metadata.json", Data: albumJSON(fmt.Sprintf("Album %d", i/100))}} {
				if err := w.add(file); err != nil {
					return err
				}
			}
			total += int64(len(data))
		}
		if i%20 == 0 {
			video := tt.Movie(time.Unix(when, 0), 2<<20, false, byte(i))
			if err := w.add(tt.File{Name: folder + strings.TrimSuffix(name, ".jpg") + ".MP4", Data: video}); err != nil {
				return err
			}
			total += int64(len(video))
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	return f.Close()
}

func albumJSON(title string) []byte {
	b, _ := json.Marshal(map[string]any{"title": title, "access": "protected"})
	return b
}

// partWriter writes a zip (media stored, JSON deflated) or a tgz.
type partWriter struct {
	zw    *zip.Writer
	tw    *tar.Writer
	gz    *gzip.Writer
	buf   *bufio.Writer
	names map[string]bool
}

func newPartWriter(f io.Writer, kind string) *partWriter {
	w := &partWriter{buf: bufio.NewWriterSize(f, 1<<20), names: map[string]bool{}}
	if kind == "tgz" {
		w.gz, _ = gzip.NewWriterLevel(w.buf, gzip.BestSpeed)
		w.tw = tar.NewWriter(w.gz)
	} else {
		w.zw = zip.NewWriter(w.buf)
	}
	return w
}

func (w *partWriter) add(f tt.File) error {
	if w.names[f.Name] {
		return nil
	}
	w.names[f.Name] = true
	mod := time.Date(2024, 5, 25, 22, 15, 0, 0, time.UTC)
	if w.tw != nil {
		if err := w.tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := w.tw.Write(f.Data)
		return err
	}
	method := zip.Store
	if strings.HasSuffix(f.Name, ".json") {
		method = zip.Deflate
	}
	zf, err := w.zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: method, Modified: mod})
	if err != nil {
		return err
	}
	_, err = zf.Write(f.Data)
	return err
}

func (w *partWriter) close() error {
	if w.tw != nil {
		if err := w.tw.Close(); err != nil {
			return err
		}
		if err := w.gz.Close(); err != nil {
			return err
		}
	} else if err := w.zw.Close(); err != nil {
		return err
	}
	return w.buf.Flush()
}
