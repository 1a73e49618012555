package account

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/srp"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// Login errors a person can act on.
var (
	ErrWrongPassword = errors.New("wrong password, or no such account")
	ErrWrongCode     = errors.New("wrong or expired code")
	ErrServerProof   = errors.New("the server failed to prove it knows this account's password verifier")
	ErrNoKeys        = errors.New("this account has no encryption keys yet: finish signing up in an Ente app first")
	ErrPasskeyWait   = errors.New("gave up waiting for the passkey to be confirmed")
)

// Prompter asks the person for what login needs. Login calls only the
// methods the account's setup requires, each at most once.
type Prompter interface {
	Password(ctx context.Context) ([]byte, error)
	EmailCode(ctx context.Context, email string) (string, error)
	TOTPCode(ctx context.Context) (string, error)
	// PasskeyURL is told where to confirm a passkey; Login then polls.
	PasskeyURL(url string)
	// DerivingKeys is told that Argon2id is about to run (seconds, up to
	// 1 GiB of memory on real accounts).
	DerivingKeys()
}

// Options tune Login. The zero value uses the real clock and crypto/rand.
type Options struct {
	// PollEvery is the passkey polling interval (default 10 s: museum
	// allows 10 calls a minute on these routes), for at most Polls polls
	// (default 30).
	PollEvery time.Duration
	Polls     int
	Sleep     func(ctx context.Context, d time.Duration) error
	Rand      io.Reader
}

type flow struct {
	c        *apiclient.Client
	email    string
	p        Prompter
	o        Options
	password []byte
	kek      []byte
}

// Login signs email in on c's server. It never repeats a login call: each
// is rate-limited and counted against the account. Errors are the sentinels
// above, *errs.ApiError (a 429 carries Retry-After), or context errors.
func Login(ctx context.Context, c *apiclient.Client, email string, p Prompter, o Options) (*Account, error) {
	if o.PollEvery == 0 {
		o.PollEvery = 10 * time.Second
	}
	if o.Polls == 0 {
		o.Polls = 30
	}
	if o.Sleep == nil {
		o.Sleep = retry.Sleep
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	f := &flow{c: c, email: email, p: p, o: o}
	resp, err := f.firstFactor(ctx)
	if err != nil {
		return nil, err
	}
	if resp, err = f.secondFactor(ctx, resp); err != nil {
		return nil, err
	}
	return f.unwrap(ctx, resp)
}

func (f *flow) firstFactor(ctx context.Context) (*apiclient.AuthResponse, error) {
	attrs, err := f.c.SRPAttributes(ctx, f.email)
	var ae *errs.ApiError
	switch {
	case errors.As(err, &ae) && ae.Status == 404:
		return f.emailCode(ctx)
	case err != nil:
		return nil, err
	case attrs.IsEmailMFAEnabled:
		return f.emailCode(ctx)
	}
	resp, err := f.srp(ctx, attrs)
	if errors.As(err, &ae) && ae.Status == 409 && ae.Code == "EMAIL_MFA_ENABLED" {
		return f.emailCode(ctx)
	}
	return resp, err
}

func (f *flow) deriveKEK(ctx context.Context, salt []byte, ops uint32, mem uint64) error {
	if f.password == nil {
		pw, err := f.p.Password(ctx)
		if err != nil {
			return err
		}
		f.password = pw
	}
	f.p.DerivingKeys()
	kek, err := keys.DeriveKEK(f.password, salt, ops, mem)
	f.kek = kek
	return err
}

func (f *flow) srp(ctx context.Context, attrs *apiclient.SRPAttributes) (*apiclient.AuthResponse, error) {
	if err := f.deriveKEK(ctx, attrs.KEKSalt, attrs.OpsLimit, attrs.MemLimit); err != nil {
		return nil, err
	}
	loginKey, err := keys.LoginKey(f.kek)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 64)
	if _, err := io.ReadFull(f.o.Rand, secret); err != nil {
		return nil, err
	}
	client := srp.NewClient([]byte(attrs.SRPUserID), loginKey, attrs.SRPSalt, secret)
	sessionID, b, err := f.c.CreateSRPSession(ctx, attrs.SRPUserID, client.A())
	if err != nil {
		return nil, err
	}
	m1, err := client.Proof(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServerProof, err)
	}
	resp, err := f.c.VerifySRPSession(ctx, attrs.SRPUserID, sessionID, m1)
	var ae *errs.ApiError
	if errors.As(err, &ae) && ae.Status == 401 {
		return nil, ErrWrongPassword
	}
	if err != nil {
		return nil, err
	}
	if err := client.VerifyServer(resp.SRPM2); err != nil {
		return nil, ErrServerProof
	}
	return resp, nil
}

func (f *flow) emailCode(ctx context.Context) (*apiclient.AuthResponse, error) {
	if err := f.c.SendOTT(ctx, f.email); err != nil {
		return nil, err
	}
	code, err := f.p.EmailCode(ctx, f.email)
	if err != nil {
		return nil, err
	}
	resp, err := f.c.VerifyEmail(ctx, f.email, code)
	return resp, wrongCode(err)
}

// wrongCode turns museum's 401 and 410 for a code into ErrWrongCode.
func wrongCode(err error) error {
	var ae *errs.ApiError
	if errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 410) {
		return ErrWrongCode
	}
	return err
}

func (f *flow) secondFactor(ctx context.Context, resp *apiclient.AuthResponse) (*apiclient.AuthResponse, error) {
	totp := resp.TwoFactorSessionID
	if resp.PasskeySessionID != "" {
		if resp.TwoFactorSessionIDV2 == "" {
			return f.passkey(ctx, resp)
		}
		totp = resp.TwoFactorSessionIDV2 // TOTP works too: no browser needed
	}
	if totp == "" {
		return resp, nil
	}
	code, err := f.p.TOTPCode(ctx)
	if err != nil {
		return nil, err
	}
	next, err := f.c.VerifyTOTP(ctx, totp, code)
	return next, wrongCode(err)
}

func (f *flow) passkey(ctx context.Context, resp *apiclient.AuthResponse) (*apiclient.AuthResponse, error) {
	q := url.Values{
		"passkeySessionID": {resp.PasskeySessionID},
		"redirect":         {"ente-cli://passkey"},
		"clientPackage":    {apiclient.ClientPackage},
	}
	f.p.PasskeyURL(resp.AccountsURL + "/passkeys/verify?" + q.Encode())
	for i := 0; i < f.o.Polls; i++ {
		if err := f.o.Sleep(ctx, f.o.PollEvery); err != nil {
			return nil, err
		}
		next, err := f.c.PasskeyStatus(ctx, resp.PasskeySessionID)
		var ae *errs.ApiError
		if errors.As(err, &ae) && ae.Status == 400 && ae.Code == "SESSION_NOT_VERIFIED" {
			continue
		}
		return next, err
	}
	return nil, ErrPasskeyWait
}

// unwrap opens the master key with the KEK, the secret key with the master
// key, and the token with the key pair.
func (f *flow) unwrap(ctx context.Context, resp *apiclient.AuthResponse) (*Account, error) {
	ka := resp.KeyAttributes
	if ka == nil {
		return nil, ErrNoKeys
	}
	if f.kek == nil {
		if err := f.deriveKEK(ctx, ka.KEKSalt, ka.OpsLimit, ka.MemLimit); err != nil {
			return nil, err
		}
	}
	master, err := keys.SecretboxOpen(ka.EncryptedKey, ka.KeyDecryptionNonce, f.kek)
	if err != nil {
		return nil, ErrWrongPassword
	}
	secret, err := keys.SecretboxOpen(ka.EncryptedSecretKey, ka.SecretKeyDecryptionNonce, master)
	if err != nil {
		return nil, fmt.Errorf("opening the account's secret key: %w", err)
	}
	token := resp.Token
	if len(resp.EncryptedToken) > 0 {
		raw, err := keys.SealedBoxOpen(resp.EncryptedToken, ka.PublicKey, secret)
		if err != nil {
			return nil, fmt.Errorf("opening the session token: %w", err)
		}
		token = keys.EncodeToken(raw)
	}
	if token == "" {
		return nil, errors.New("the server sent no session token")
	}
	return &Account{
		Endpoint: f.c.Endpoint(), UserID: resp.ID, Email: f.email, Token: token,
		MasterKey: master, SecretKey: secret, PublicKey: ka.PublicKey, KeyAttributes: *ka,
	}, nil
}
