// Package account logs in to Ente (SRP or an emailed code, then TOTP or a
// passkey) and unwraps the account's keys into an Account: what every later
// run needs, so that those runs, from cron too, need no password.
package account

import (
	"strings"

	"github.com/quak-photos/quak/apiclient"
)

// Account is a logged-in session: what every later run needs.
type Account struct {
	Endpoint      string                  `json:"endpoint"`
	UserID        int64                   `json:"userID"`
	Email         string                  `json:"email"`
	Token         string                  `json:"token"`
	MasterKey     apiclient.B64           `json:"masterKey"`
	SecretKey     apiclient.B64           `json:"secretKey"`
	PublicKey     apiclient.B64           `json:"publicKey"`
	KeyAttributes apiclient.KeyAttributes `json:"keyAttributes"`
}

// SameEmail reports whether two emails name the same account.
func SameEmail(a, b string) bool { return strings.EqualFold(a, b) }

// SameEndpoint reports whether two server addresses name the same server.
func SameEndpoint(a, b string) bool {
	return strings.EqualFold(strings.TrimRight(a, "/"), strings.TrimRight(b, "/"))
}
