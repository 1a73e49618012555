package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/account"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/publink"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/retry"
)

// linkMaxConcurrency is how many files a link backup downloads at once
// unless --concurrency says otherwise: nothing on museum limits a link's
// readers, so quak spares the owner's server.
const linkMaxConcurrency = 4

// linkFlags choose a public album link to back up instead of an account.
type linkFlags struct {
	url, file, passwordFile, endpoint string
}

func (l *linkFlags) register(f *pflag.FlagSet) {
	f.StringVar(&l.url, "link", "", "back up the album of this public link (https://albums.ente.com/?t=…#…); visible in ps: prefer --link-file")
	f.StringVar(&l.file, "link-file", "", "read the public link from this file, readable by you alone (- reads it from stdin)")
	f.StringVar(&l.passwordFile, "password-file", "", "a password link's password, from this file readable by you alone (default: a prompt)")
	f.StringVar(&l.endpoint, "endpoint", "", "the API server of a link to a self-hosted Ente (a link's host cannot say it)")
}

// check refuses link flags that cannot go together, or with --all (each
// folder keeps its own link).
func (l *linkFlags) check(all bool) error {
	switch {
	case all && (l.url != "" || l.file != "" || l.passwordFile != ""):
		return &usageError{errors.New("--all backs up each folder from the link it keeps: give --link, --link-file or --password-file with one DIR")}
	case l.url != "" && l.file != "":
		return &usageError{errors.New("--link and --link-file both give the link: use one")}
	case l.url == "" && l.file == "" && l.endpoint != "":
		return &usageError{errors.New("--endpoint names a link's API server, so it goes with --link or --link-file")}
	}
	return nil
}

// read is the link the flags give, or "" for none.
func (l *linkFlags) read(d deps) (string, error) {
	switch {
	case l.url != "":
		return l.url, nil
	case l.file == "-":
		b, err := io.ReadAll(io.LimitReader(d.stdin, 4096))
		return strings.TrimSpace(string(b)), err
	case l.file != "":
		b, err := readSecretFile(l.file)
		if err != nil {
			return "", &usageError{fmt.Errorf("--link-file: %w", err)}
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", nil
}

// linkSource is a public link opened and checked, ready to back up.
type linkSource struct {
	sec   folder.LinkSecrets
	lib   *backup.LinkLibrary
	album string
}

// openLink opens the link the flags give or, with none, the one dir
// follows; nil when there is neither (an account's backup). It reads the
// link's album first: a link that does not work, a key that does not open
// the album, downloads turned off or a wrong password end it here, before
// anything is written.
func openLink(ctx context.Context, d deps, o *backupOpts, dir string) (*linkSource, error) {
	sec, err := linkSecrets(d, &o.link, dir)
	if sec == nil || err != nil {
		return nil, err
	}
	c, err := linkClient(d, &o.net, sec)
	if err != nil {
		return nil, err
	}
	var info *apiclient.LinkInfo
	err = retry.Do(ctx, retryPolicy(d, o.attempts), func(ctx context.Context) error {
		info, err = c.Info(ctx)
		return err
	})
	if retry.Unreachable(err) && ctx.Err() == nil {
		return nil, &backup.UnreachableError{InARow: 1, Err: err} // exit 75, as an account's server
	}
	if err != nil {
		return nil, fmt.Errorf("reading the %s: %w", sec, err)
	}
	if info.DeviceToken != "" {
		sec.DeviceToken, c = info.DeviceToken, c.WithDeviceToken(info.DeviceToken)
	}
	album, err := catalog.OpenLinkAlbum(&info.Collection, sec.Key)
	if err != nil {
		return nil, errLinkKey
	}
	if !info.Settings.EnableDownload {
		return nil, &noDownloadError{album: album.Name}
	}
	if info.Settings.PasswordEnabled {
		if c, err = linkPassword(ctx, d, o, dir, c, info, sec, album.Name); err != nil {
			return nil, err
		}
	}
	sec.Album = info.Collection.ID
	return &linkSource{sec: *sec, album: album.Name, lib: &backup.LinkLibrary{LinkClient: c, Info: info, Key: sec.Key}}, nil
}

// errLinkKey reports a link whose key does not open its album.
var errLinkKey = errors.New("the part of the link after # does not open its album: copy the whole link again")

// noDownloadError is a link whose owner turned downloads off.
type noDownloadError struct{ album string }

func (e *noDownloadError) Error() string {
	return fmt.Sprintf("the owner of the album %q turned downloads off for this link; quak honours that and saved nothing", e.album)
}

// linkSecrets is the link to back up: the flags' (keeping the password's
// and the device's tokens dir kept for the same link), else the one dir
// follows, else nil.
func linkSecrets(d deps, lf *linkFlags, dir string) (*folder.LinkSecrets, error) {
	f := folder.At(dir)
	var kept *folder.LinkSecrets
	if f.HasLink() {
		b, err := readSecretFile(f.LinkPath())
		if err != nil {
			return nil, err
		}
		if kept, err = f.ParseLink(b); err != nil {
			return nil, err
		}
	}
	raw, err := lf.read(d)
	if raw == "" || err != nil {
		return kept, err
	}
	l, err := publink.Parse(raw)
	if err != nil {
		return nil, &usageError{fmt.Errorf("the link: %w", err)}
	}
	endpoint := lf.endpoint
	switch {
	case endpoint != "":
	case kept != nil && kept.Host == l.Host:
		endpoint = kept.Endpoint // the folder's link came from this host's server
	default:
		if endpoint, err = l.Endpoint(); errors.Is(err, publink.ErrSelfHosted) {
			return nil, &usageError{fmt.Errorf("the link is on %s: %w", l.Host, publink.ErrSelfHosted)}
		} else if err != nil {
			return nil, &usageError{fmt.Errorf("the link: %w", err)}
		}
	}
	sec := &folder.LinkSecrets{Host: l.Host, Endpoint: endpoint, AccessToken: l.AccessToken, Key: l.Key}
	if kept != nil && kept.AccessToken == sec.AccessToken && account.SameEndpoint(kept.Endpoint, endpoint) {
		sec.JWT, sec.DeviceToken = kept.JWT, kept.DeviceToken
	}
	return sec, nil
}

// linkClient is a client of sec's link with quak's deadlines, sending the
// tokens sec kept.
func linkClient(d deps, n *netFlags, sec *folder.LinkSecrets) (*apiclient.LinkClient, error) {
	c, err := apiclient.NewLinkClient(sec.Endpoint, n.httpClient(d), "quak/"+quakVersion(), sec.AccessToken)
	if err != nil {
		return nil, err
	}
	if sec.DeviceToken != "" {
		c = c.WithDeviceToken(sec.DeviceToken)
	}
	return c, nil
}

// probeSince is a sinceTime past every entry: a listing from it is empty,
// and answers only whether the password's token is still good.
const probeSince = 1 << 62

// linkPassword returns c with the password's token: the one sec kept while
// the server takes it, else one for the password asked once (a prompt, or
// --password-file). A wrong password ends the run: museum allows 10 tries
// a minute, so quak never asks again by itself.
func linkPassword(ctx context.Context, d deps, o *backupOpts, dir string, c *apiclient.LinkClient, info *apiclient.LinkInfo,
	sec *folder.LinkSecrets, album string) (*apiclient.LinkClient, error) {
	if sec.JWT != "" {
		jc := c.WithJWT(sec.JWT)
		err := retry.Do(ctx, retryPolicy(d, o.attempts), func(ctx context.Context) error {
			_, err := jc.Diff(ctx, probeSince)
			return err
		})
		if !errors.Is(err, apiclient.ErrLinkPassword) {
			return jc, err
		}
		sec.JWT = "" // the owner changed the password
	}
	if o.link.passwordFile == "" && d.readPassword == nil {
		return nil, &noPasswordError{dir: dir, given: o.link.url != "" || o.link.file != ""}
	}
	if o.link.passwordFile == "" {
		sayf(d.stderr, "The link to \"%s\" has a password.\n", album)
	}
	pw, err := newPrompter(d, o.link.passwordFile).Password(ctx)
	if err != nil {
		return nil, err
	}
	hash, err := info.Settings.PassHash(string(pw))
	if err != nil {
		return nil, err
	}
	jwt, err := c.VerifyPassword(ctx, hash)
	if err != nil {
		return nil, err
	}
	sec.JWT = jwt
	return c.WithJWT(jwt), nil
}

// noPasswordError is a password link whose password no terminal can be
// asked for and no --password-file gives. given: the link came from the
// command line (the folder may not keep it yet).
type noPasswordError struct {
	dir   string
	given bool
}

func (e *noPasswordError) Error() string {
	return apiclient.ErrLinkPassword.Error() + ", and there is no terminal to ask for it: pass --password-file"
}

func (e *noPasswordError) Unwrap() error { return apiclient.ErrLinkPassword }

// hint says how to give the password once, for good.
func (e *noPasswordError) hint() string {
	if e.given {
		return "run this command at a terminal to type the link's password, or pass --password-file; " +
			"later runs need only `quak backup " + e.dir + "`"
	}
	return "run `quak backup " + e.dir + "` once at a terminal to type the link's password, or pass --password-file; " +
		"later runs use what the server gave for it"
}

// source is the backup's source: the link's album, read without account.
func (l *linkSource) source() backup.Source {
	return backup.Source{Library: l.lib, Endpoint: l.sec.Endpoint, Link: l.sec.Album}
}

// owner stands for the account in the folder's records: a link's has no
// email and no user.
func (l *linkSource) owner() *account.Account { return &account.Account{Endpoint: l.sec.Endpoint} }

// httpClient is an HTTP client with quak's deadlines.
func (n *netFlags) httpClient(d deps) *http.Client {
	dl := apiclient.DefaultDeadlines()
	dl.Headers, dl.BodyIdle = n.requestTimeout, n.idleTimeout
	base := d.transport
	if base == nil {
		base = baseTransport()
	}
	return &http.Client{Transport: apiclient.NewDeadlineTransport(base, dl)}
}

// runSource is what a backup reads and how: who stands in the folder's
// records, the source, the cap on downloads at once (0: pace's), and what
// to do once the run has the folder (nil: nothing).
type runSource struct {
	who            *account.Account
	src            backup.Source
	maxConcurrency int
	oneStream      bool // each file as one stream, whatever --streams' default
	started        func() error
}

// backupSource is what a backup of dir reads: the public link the flags
// give or dir follows, else the account's session.
func backupSource(ctx context.Context, d deps, o *backupOpts, dir string) (*runSource, error) {
	l, err := openLink(ctx, d, o, dir)
	if err != nil {
		return nil, err
	}
	if l != nil && o.multi.account != "" && !o.multi.all {
		return nil, &usageError{fmt.Errorf("--account names an account, and %s follows a public link, read without one", dir)}
	}
	if l != nil {
		// Spare the owner's server: one connection a file unless
		// --streams says more.
		rs := &runSource{who: l.owner(), src: l.source(), maxConcurrency: linkMaxConcurrency, oneStream: o.fs == nil || !o.fs.Changed("streams")}
		if !o.dryRun {
			rs.started = func() error { return folder.At(dir).WriteLink(l.sec) }
		}
		return rs, nil
	}
	if err := missingLink(dir); err != nil {
		return nil, err
	}
	a, c, err := loadSessionFor(d, &o.net, dir, o.multi.account)
	if err != nil {
		return nil, err
	}
	return &runSource{who: a, src: backup.Source{Client: c, Email: a.Email, Endpoint: a.Endpoint,
		Keys: catalog.Keys{UserID: a.UserID, MasterKey: a.MasterKey, PublicKey: a.PublicKey, SecretKey: a.SecretKey}}}, nil
}

// streams is how many ranges a large file is fetched as: asked, or one
// for a public link's album.
func (rs *runSource) streams(asked int) int {
	if rs.oneStream {
		return 1
	}
	return asked
}

// missingLink refuses a folder whose records say it follows a public link
// but whose link file is gone (or is not a file): the run needs the link
// again, not a login.
func missingLink(dir string) error {
	f := folder.At(dir)
	if f.HasLink() {
		return nil
	}
	if owner, err := f.Owner(); err == nil && owner != nil && owner.Link != 0 {
		return &folder.DirError{Dir: dir, Reason: fmt.Sprintf("is the backup of a public link, but %s is missing or not a file: "+
			"give the link again with --link-file", f.LinkPath())}
	}
	return nil
}
