// Command fakeente runs quak's fake Ente server on loopback with a demo
// library, for trying quak without an account and for manual testing:
//
//	$ go run ./apiclient/enteapitest/fakeente -addr 127.0.0.1:8080
//
// It never listens beyond loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address for the API server")
	pwFile := flag.String("password-file", "", "also write the demo password to this file (mode 0600)")
	urlFile := flag.String("url-file", "", "write the endpoint URL to this file once listening")
	linkFile := flag.String("link-file", "", "also share an album by a public link, and write the link to this file (mode 0600)")
	library := flag.String("library", "demo", "demo, or bench:N:SIZE for N generated files of SIZE bytes")
	latency := flag.Duration("latency", 0, "WAN mode: delay every request by this round trip")
	bw := flag.Int64("bw", 0, "WAN mode: bytes a second per connection for response bodies (0: no cap)")
	flag.Parse()
	if err := serve(*addr, *pwFile, *urlFile, *linkFile, *library, enteapitest.WAN{Latency: *latency, Bandwidth: *bw}); err != nil {
		fmt.Fprintln(os.Stderr, "fakeente:", err)
		os.Exit(1)
	}
}

func serve(addr, pwFile, urlFile, linkFile, library string, wan enteapitest.WAN) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address; the fake server only listens on loopback", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := enteapitest.New(enteapitest.Config{Listener: ln})
	defer s.Close()
	s.SetWAN(wan)
	var n int
	var size int64
	switch {
	case library == "demo":
		enteapitest.DemoLibrary(s)
	case strings.HasPrefix(library, "bench:"):
		if _, err := fmt.Sscanf(library, "bench:%d:%d", &n, &size); err != nil || n < 1 || size < 0 {
			return fmt.Errorf("library %q: want bench:N:SIZE", library)
		}
		enteapitest.BenchLibrary(s, n, size)
	default:
		return fmt.Errorf("unknown library %q", library)
	}
	if pwFile != "" {
		if err := os.WriteFile(pwFile, []byte(enteapitest.DemoPassword+"\n"), 0o600); err != nil {
			return err
		}
	}
	if linkFile != "" {
		if err := os.WriteFile(linkFile, []byte(enteapitest.DemoLink(s).URL()+"\n"), 0o600); err != nil {
			return err
		}
	}
	if urlFile != "" {
		if err := os.WriteFile(urlFile, []byte(s.URL()+"\n"), 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("Fake Ente server: %s\nDemo account: %s / %s\n", s.URL(), enteapitest.DemoEmail, enteapitest.DemoPassword)
	fmt.Printf("Try:\n  QUAK_ENDPOINT=%s quak login --email %s\n", s.URL(), enteapitest.DemoEmail)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
