package apiclient

import (
	"context"
	"net/url"
)

// Login calls are never repeated automatically: museum allows 10 a minute
// per IP on these routes and counts failed attempts against the account.

// SRPAttributes fetches the SRP and key-derivation parameters of email.
// A 404 means no such account, or one without SRP (use email OTT).
func (c *Client) SRPAttributes(ctx context.Context, email string) (*SRPAttributes, error) {
	var out struct {
		Attributes SRPAttributes `json:"attributes"`
	}
	err := c.do(ctx, "GET", "/users/srp/attributes", url.Values{"email": {email}}, nil, &out)
	return &out.Attributes, err
}

// CreateSRPSession sends the client's public value A (512 bytes) and
// returns the session id and the server's B.
func (c *Client) CreateSRPSession(ctx context.Context, srpUserID string, a []byte) (sessionID string, b []byte, err error) {
	in := map[string]any{"srpUserID": srpUserID, "srpA": B64(a)}
	var out struct {
		SessionID string `json:"sessionID"`
		SRPB      B64    `json:"srpB"`
	}
	err = c.do(ctx, "POST", "/users/srp/create-session", nil, in, &out)
	return out.SessionID, out.SRPB, err
}

// VerifySRPSession sends the proof M1. A 401 means a wrong password.
func (c *Client) VerifySRPSession(ctx context.Context, srpUserID, sessionID string, m1 []byte) (*AuthResponse, error) {
	in := map[string]any{"srpUserID": srpUserID, "sessionID": sessionID, "srpM1": B64(m1)}
	var out AuthResponse
	err := c.do(ctx, "POST", "/users/srp/verify-session", nil, in, &out)
	return &out, err
}

// SendOTT asks museum to email a login code to email.
func (c *Client) SendOTT(ctx context.Context, email string) error {
	return c.do(ctx, "POST", "/users/ott", nil, map[string]any{"email": email, "purpose": "login"}, nil)
}

// VerifyEmail logs in with the emailed code.
func (c *Client) VerifyEmail(ctx context.Context, email, ott string) (*AuthResponse, error) {
	var out AuthResponse
	err := c.do(ctx, "POST", "/users/verify-email", nil, map[string]any{"email": email, "ott": ott}, &out)
	return &out, err
}

// VerifyTOTP completes a TOTP second factor.
func (c *Client) VerifyTOTP(ctx context.Context, sessionID, code string) (*AuthResponse, error) {
	var out AuthResponse
	err := c.do(ctx, "POST", "/users/two-factor/verify", nil, map[string]any{"sessionID": sessionID, "code": code}, &out)
	return &out, err
}

// PasskeyStatus polls a passkey second factor: 400 SESSION_NOT_VERIFIED
// until the browser ceremony is done, then the authorization.
func (c *Client) PasskeyStatus(ctx context.Context, sessionID string) (*AuthResponse, error) {
	var out AuthResponse
	err := c.do(ctx, "GET", "/users/two-factor/passkeys/get-token", url.Values{"sessionID": {sessionID}}, nil, &out)
	return &out, err
}

// SessionValidity checks the token; a 401 (errs.ErrNotLoggedIn) means it is
// no longer valid.
func (c *Client) SessionValidity(ctx context.Context) (hasSetKeys bool, err error) {
	var out struct {
		HasSetKeys bool `json:"hasSetKeys"`
	}
	err = c.do(ctx, "GET", "/users/session-validity/v2", nil, nil, &out)
	return out.HasSetKeys, err
}

// Logout ends the session on the server.
func (c *Client) Logout(ctx context.Context) error {
	return c.do(ctx, "POST", "/users/logout", nil, nil, nil)
}
