package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
)

type loginOpts struct {
	net          netFlags
	email        string
	endpoint     string
	passwordFile string
}

func newLoginCmd(d deps) *cobra.Command {
	o := &loginOpts{}
	c := &cobra.Command{
		Use:   "login",
		Short: "Sign in to Ente once; later runs reuse the session",
		Long: `Sign in to your Ente account. quak asks for your password (never stored),
and for the emailed code, authenticator code or passkey your account uses.
The session is kept in session.json in quak's config folder ($QUAK_CONFIG_DIR,
else $XDG_CONFIG_HOME/quak or ~/.config/quak), mode 0600, so that backups from
cron need no password. Logging in to another account adds its session beside
the others (one per account and server; quak accounts lists them); logging in
again to the same one replaces it. Login attempts are never retried
automatically.

Exit codes: 0 logged in, 1 login failed, 64 bad command line.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runLogin(c.Context(), d, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.email, "email", "", "account email (asked when not given)")
	f.StringVar(&o.endpoint, "endpoint", "", "Ente API server, for self-hosting (default $QUAK_ENDPOINT or "+apiclient.DefaultEndpoint+")")
	f.StringVar(&o.passwordFile, "password-file", "", "read the password from this file (default $QUAK_PASSWORD_FILE, else a prompt)")
	o.net.register(f)
	return c
}

func runLogin(ctx context.Context, d deps, o *loginOpts) error {
	path, err := sessionPath(d.getenv)
	if err != nil {
		return err
	}
	p := newPrompter(d, firstOf(o.passwordFile, d.getenv("QUAK_PASSWORD_FILE")))
	email := o.email
	if email == "" {
		if email, err = p.line("Email: "); err != nil {
			return err
		}
	}
	endpoint := firstOf(o.endpoint, d.getenv("QUAK_ENDPOINT"))
	if endpoint == "" {
		if endpoint = rememberedEndpoint(d, email); endpoint != "" {
			sayf(d.stderr, "quak: logging in on %s, the server %s's earlier session or backup folder recorded (--endpoint chooses another)\n", endpoint, email)
		}
	}
	c, err := o.net.client(d, firstOf(endpoint, apiclient.DefaultEndpoint))
	if err != nil {
		return err
	}
	a, err := account.Login(ctx, c, email, p, account.Options{Sleep: d.sleep})
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	n, err := addSession(path, a)
	if err != nil {
		return fmt.Errorf("saving the session: %w", err)
	}
	sayf(d.stdout, "Logged in as %s on %s.\nSession saved to %s.\n", a.Email, a.Endpoint, path)
	if n > 1 {
		fmt.Fprintf(d.stdout, "%d accounts are logged in; quak accounts lists them.\n", n)
	}
	return nil
}

// rememberedEndpoint is the server email's earlier session (expired,
// say) or one of its recorded backup folders used, or "".
func rememberedEndpoint(d deps, email string) string {
	if ss, _, err := loadSessions(d); err == nil && ss != nil {
		for _, a := range ss.List {
			if account.SameEmail(a.Email, email) && a.Endpoint != "" {
				return a.Endpoint
			}
		}
	}
	if fs, _, err := loadFolders(d); err == nil && fs != nil {
		for _, f := range fs.List {
			if account.SameEmail(f.Email, email) && f.Endpoint != "" {
				return f.Endpoint
			}
		}
	}
	return ""
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
