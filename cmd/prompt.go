package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// prompter asks the person at the terminal for what login needs. Questions
// go to stderr; answers come from stdin, the password without echo.
type prompter struct {
	d            deps
	in           *bufio.Reader
	passwordFile string
}

func newPrompter(d deps, passwordFile string) *prompter {
	return &prompter{d: d, in: bufio.NewReader(d.stdin), passwordFile: passwordFile}
}

func (p *prompter) line(question string) (string, error) {
	fmt.Fprint(p.d.stderr, question)
	s, err := p.in.ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || s == "") {
		return "", fmt.Errorf("reading an answer to %q: %w", strings.TrimSpace(question), err)
	}
	return strings.TrimSpace(s), nil
}

func (p *prompter) Password(ctx context.Context) ([]byte, error) {
	if p.passwordFile != "" {
		return readSecretFile(p.passwordFile)
	}
	if p.d.readPassword == nil {
		return nil, errors.New("no terminal to ask for the password: use --password-file or QUAK_PASSWORD_FILE")
	}
	fmt.Fprint(p.d.stderr, "Password: ")
	restore := func() {}
	if p.d.saveTerminal != nil {
		restore = p.d.saveTerminal()
	}
	pw, err := readOrCancel(ctx, p.d.readPassword, restore)
	fmt.Fprintln(p.d.stderr)
	return pw, err
}

// readOrCancel returns what read returns, or, as soon as ctx ends (Ctrl-C),
// the context's error without waiting for Enter; restore then puts the
// terminal back as it was (echo on), since read is left behind.
func readOrCancel(ctx context.Context, read func() ([]byte, error), restore func()) ([]byte, error) {
	type answer struct {
		b   []byte
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		b, err := read()
		ch <- answer{b, err}
	}()
	select {
	case a := <-ch:
		return a.b, a.err
	case <-ctx.Done():
		restore()
		return nil, ctx.Err()
	}
}

func (p *prompter) EmailCode(_ context.Context, email string) (string, error) {
	return p.line(fmt.Sprintf("Enter the code Ente emailed to %s: ", email))
}

func (p *prompter) TOTPCode(context.Context) (string, error) {
	return p.line("Enter the code from your authenticator app: ")
}

func (p *prompter) PasskeyURL(url string) {
	sayf(p.d.stderr, "Confirm with your passkey in a browser:\n  %s\nWaiting…\n", url)
}

func (p *prompter) DerivingKeys() {
	fmt.Fprintln(p.d.stderr, "Deriving keys from your password (a few seconds)…")
}
