package apiclient

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/quak-photos/quak/errs"
)

// Why museum refuses a public link (docs/protocol.md PL.4). A LinkError's
// Reason is one of these; match them with errors.Is.
var (
	// ErrLinkDisabled: the owner turned the link off or made a new one
	// (which has a new token), or deleted the album or the account.
	ErrLinkDisabled = errors.New("the link was turned off or replaced by a new one")
	// ErrLinkExpired: the link's expiry date has passed.
	ErrLinkExpired = errors.New("the link has expired")
	// ErrLinkNoSubscription: the owner's subscription has lapsed.
	ErrLinkNoSubscription = errors.New("the link's owner has no active subscription")
	// ErrLinkUnknown: the server knows no link with this token. A link
	// of a self-hosted server asked of another server looks the same.
	ErrLinkUnknown = errors.New("the server knows no link with this token")
	// ErrLinkPassword: the link has a password and no valid JWT was sent,
	// or the password changed since it was given.
	ErrLinkPassword = errors.New("the link needs its password")
	// ErrLinkWrongPassword: VerifyPassword was given a wrong password.
	ErrLinkWrongPassword = errors.New("wrong password for the link")
	// ErrLinkDeviceLimit: the link admits no more devices. Trying again,
	// or with another User-Agent, only uses up the owner's slots.
	ErrLinkDeviceLimit = errors.New("the link's device limit is reached")
)

// LinkError is museum refusing a public link: Reason is one of the ErrLink
// values, Answer the answer that said so. errors.Is matches the Reason.
//
// It does not unwrap to Answer, on purpose: a link's 401 is not the
// account's errs.ErrNotLoggedIn, and an older museum's 429 for the device
// limit is no rate limit, so retry.Classify finds it permanent.
type LinkError struct {
	Reason error
	Answer *errs.ApiError
}

func (e *LinkError) Error() string { return e.Reason.Error() + " (" + e.Answer.Error() + ")" }

// Unwrap returns the Reason.
func (e *LinkError) Unwrap() error { return e.Reason }

// linkRefusal turns museum's answer to a link request into *LinkError when
// it refuses the link itself, from its status and body (museum's
// middleware answers have no code); any other answer stays e: a 403 {} on a
// download is a file not in the album, a 429 {"error":"Rate limit breached,
// try later"} a rate limit to wait out.
func linkRefusal(e *errs.ApiError, raw []byte) error {
	var body struct {
		Code  string          `json:"code"`
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(raw, &body) // not JSON: no refusal museum words
	var msg string
	isText := json.Unmarshal(body.Error, &msg) == nil
	var reason error
	switch {
	case e.Status == 403 && body.Code == "LINK_DEVICE_LIMIT_EXCEEDED",
		e.Status == 429 && msg == "reached device limit": // museum before 2026-04
		reason = ErrLinkDeviceLimit
	case e.Status == 410 && msg == "expired token":
		reason = ErrLinkExpired
	case e.Status == 410 && msg == "no active subscription":
		reason = ErrLinkNoSubscription
	case e.Status == 410: // "disabled token", or any other way of being gone
		reason = ErrLinkDisabled
	case e.Status == 401 && len(body.Error) > 0 && !isText: // {"error":{}}
		reason = ErrLinkPassword
	case e.Status == 401 && strings.HasSuffix(e.Path, linkPasswordPath) && body.Error == nil: // {}
		reason = ErrLinkWrongPassword
	case e.Status == 401: // "invalid token", "missing accessToken"
		reason = ErrLinkUnknown
	default:
		return e
	}
	return &LinkError{Reason: reason, Answer: e}
}
