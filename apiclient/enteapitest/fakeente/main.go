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
	"syscall"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address for the API server")
	pwFile := flag.String("password-file", "", "also write the demo password to this file (mode 0600)")
	urlFile := flag.String("url-file", "", "write the endpoint URL to this file once listening")
	flag.Parse()
	if err := serve(*addr, *pwFile, *urlFile); err != nil {
		fmt.Fprintln(os.Stderr, "fakeente:", err)
		os.Exit(1)
	}
}

func serve(addr, pwFile, urlFile string) error {
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
	enteapitest.DemoLibrary(s)
	if pwFile != "" {
		if err := os.WriteFile(pwFile, []byte(enteapitest.DemoPassword+"\n"), 0o600); err != nil {
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
