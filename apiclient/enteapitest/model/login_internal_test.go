package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Approving a passkey in the browser approves that user's pending login
// only; another user's stays unverified (400 SESSION_NOT_VERIFIED).
func TestApprovingAPasskeyApprovesThatUsersLoginOnly(t *testing.T) {
	m := New(Config{})
	ann := m.AddUser("ann@example.org", "a", UserOptions{NoSRP: true, Passkey: true})
	bob := m.AddUser("bob@example.org", "b", UserOptions{NoSRP: true, Passkey: true})
	pending := map[*User]string{}
	for _, u := range []*User{ann, bob} {
		require.NoError(t, m.SendOTT(u.Email))
		auth, err := m.VerifyEmail(u.Email, OTT, "photos")
		require.NoError(t, err)
		require.NotEmpty(t, auth.PasskeySessionID)
		pending[u] = auth.PasskeySessionID
	}
	ann.ApprovePasskey()
	auth, err := m.PasskeyToken(pending[ann], "photos")
	require.NoError(t, err)
	assert.Equal(t, ann.ID, auth.ID)
	_, err = m.PasskeyToken(pending[bob], "photos")
	var rf *Refusal
	require.ErrorAs(t, err, &rf)
	assert.Equal(t, "SESSION_NOT_VERIFIED", rf.Code)
}
