package cmd

import (
	"context"
	"errors"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/folder"
)

// isLinkRefusal reports an error that ends a public link's backup because
// of the link itself.
func isLinkRefusal(err error) bool {
	var nd *noDownloadError
	var le *apiclient.LinkError
	return errors.As(err, &nd) || errors.As(err, &le) || errors.Is(err, apiclient.ErrLinkPassword) || errors.Is(err, errLinkKey)
}

// linkExitCode is the exit code of a link's refusal: downloads turned off
// have their own; a password needed or wrong is the login's; a wrong key
// is the command line's; a link that stopped working is fatal.
func linkExitCode(err error) int {
	var nd *noDownloadError
	switch {
	case errors.As(err, &nd):
		return exitNoDownload
	case errors.Is(err, apiclient.ErrLinkPassword), errors.Is(err, apiclient.ErrLinkWrongPassword):
		return exitLogin
	case errors.Is(err, errLinkKey):
		return exitUsage
	}
	return exitFatal
}

// linkHint is what to do about a link's refusal.
func linkHint(err error, command string) string {
	var np *noPasswordError
	switch {
	case errors.As(err, &np):
		return np.hint()
	case errors.Is(err, apiclient.ErrLinkPassword):
		return "run `" + command + " DIR` once at a terminal to type the link's password, or pass --password-file; later runs use what the server gave for it"
	case errors.Is(err, apiclient.ErrLinkWrongPassword):
		return "check the password with the album's owner; quak never retries it by itself (the server allows 10 tries a minute)"
	case errors.Is(err, apiclient.ErrLinkDisabled), errors.Is(err, apiclient.ErrLinkExpired):
		return "ask the album's owner for a new link, then run `" + command + " --link-file FILE DIR`; the folder keeps everything it saved"
	case errors.Is(err, apiclient.ErrLinkDeviceLimit):
		return "the owner's link admits no more devices: ask them to raise its device limit; quak does not try again with another identity"
	case errors.Is(err, apiclient.ErrLinkUnknown):
		return "check that the link was copied whole; a link to a self-hosted Ente needs --endpoint with its API server"
	case errors.Is(err, apiclient.ErrLinkNoSubscription):
		return "the album's owner must renew their Ente subscription for the link to work again"
	}
	return ""
}

// checkLinkSession is checkSession for a folder that follows a public
// link: whether the link still opens its album, asked of the server.
func checkLinkSession(ctx context.Context, d deps, n *netFlags, dir, _ string, _ *folder.RunRecord) (string, *folder.Problem) {
	sec, err := linkSecrets(d, &linkFlags{}, dir)
	if err != nil {
		return "could not be checked: " + err.Error(), nil
	}
	c, err := linkClient(d, n, sec)
	if err != nil {
		return "could not be checked: " + err.Error(), nil
	}
	_, err = c.Info(ctx)
	var le *apiclient.LinkError
	switch {
	case errors.As(err, &le):
		return "the link no longer works", &folder.Problem{Kind: folder.LoggedOut, Msg: "the " + sec.String() + " no longer works: " + le.Reason.Error()}
	case err != nil:
		return "could not be checked: " + err.Error(), nil
	}
	return "the " + sec.String() + " works", nil
}
