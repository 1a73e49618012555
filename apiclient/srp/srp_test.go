package srp

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fromHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// TestEnteVector is the SRP vector of docs/protocol.md §9: M1 pinned by
// museum's own go-srp (via Ente's rust core test), with an A whose top
// byte is zero.
func TestEnteVector(t *testing.T) {
	I, s, P := []byte("repro-user-id"), []byte("0123456789abcdef"), []byte("1234567890abcdef")
	a := make([]byte, 64)
	a[62], a[63] = 0x06, 0xde
	b := bytes.Repeat([]byte{0x42}, 64)

	c := NewClient(I, P, s, a)
	A := c.A()
	require.Len(t, A, Size)
	assert.Equal(t, byte(0), A[0], "this vector's A has a leading zero byte")

	srv := NewServer(Verifier(I, P, s), b)
	m1, err := c.Proof(srv.B())
	require.NoError(t, err)
	assert.Equal(t, fromHex(t, "c0953b8c74d400fbf664a515deb700d73b65231e7e207a2e2326ff8cf70567ac"), m1)

	m2, err := srv.Verify(A, m1)
	require.NoError(t, err)
	assert.Equal(t, fromHex(t, "867014678fa90610b00da7a77c2ede58aae999d612f61580bb3aa199e612a561"), m2)
	assert.NoError(t, c.VerifyServer(m2))
}

func TestWrongPasswordFails(t *testing.T) {
	I, s := []byte("user"), []byte("salt-salt-salt-s")
	srv := NewServer(Verifier(I, []byte("right"), s), bytes.Repeat([]byte{7}, 32))
	c := NewClient(I, []byte("wrong"), s, bytes.Repeat([]byte{9}, 32))
	m1, err := c.Proof(srv.B())
	require.NoError(t, err)
	_, err = srv.Verify(c.A(), m1)
	assert.ErrorIs(t, err, ErrBadProof)
}

func TestTamperedM2IsRejected(t *testing.T) {
	I, P, s := []byte("user"), []byte("pw"), []byte("salt")
	srv := NewServer(Verifier(I, P, s), bytes.Repeat([]byte{7}, 32))
	c := NewClient(I, P, s, bytes.Repeat([]byte{9}, 32))
	m1, err := c.Proof(srv.B())
	require.NoError(t, err)
	m2, err := srv.Verify(c.A(), m1)
	require.NoError(t, err)
	m2[5] ^= 1
	assert.ErrorIs(t, c.VerifyServer(m2), ErrBadProof)
	assert.ErrorIs(t, NewClient(I, P, s, []byte{1}).VerifyServer(m2), ErrBadProof, "no M1 yet")
}

// A B that is 0 mod N would fix S; it must be refused, as must A on the server.
func TestZeroPublicValuesRefused(t *testing.T) {
	c := NewClient([]byte("u"), []byte("p"), []byte("s"), []byte{3})
	for _, bad := range [][]byte{pad(big.NewInt(0)), pad(bigN), nil, make([]byte, Size+1)} {
		_, err := c.Proof(bad)
		assert.ErrorIs(t, err, ErrBadValue)
		_, err = NewServer([]byte{1}, []byte{2}).Verify(bad, make([]byte, 32))
		assert.ErrorIs(t, err, ErrBadValue)
	}
}

// Leading zero bytes in B must survive padding on both sides: find a b whose
// B starts with 0x00 and log in with it.
func TestLeadingZeroB(t *testing.T) {
	I, P, s := []byte("user"), []byte("pw"), []byte("salt")
	v := Verifier(I, P, s)
	for i := 0; i < 5000; i++ {
		secret := []byte{byte(i >> 8), byte(i), 1}
		srv := NewServer(v, secret)
		if srv.B()[0] != 0 {
			continue
		}
		c := NewClient(I, P, s, bytes.Repeat([]byte{5}, 32))
		m1, err := c.Proof(srv.B())
		require.NoError(t, err)
		m2, err := srv.Verify(c.A(), m1)
		require.NoError(t, err)
		require.NoError(t, c.VerifyServer(m2))
		return
	}
	t.Fatal("no B with a leading zero byte in 5000 tries")
}
