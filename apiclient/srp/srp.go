// Package srp implements the SRP-6a variant Ente's server speaks: the RFC
// 5054 4096-bit group with g = 5, SHA-256, and A, B and S padded to 512 bytes
// wherever they are hashed, with M1 = H(A | B | S) and the server proof
// M2 = H(A | M1 | K). Both sides are here; quak's fake server uses the second.
package srp

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"math/big"
)

// groupHex is the RFC 3526 / RFC 5054 4096-bit safe prime.
const groupHex = "" +
	"FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74" +
	"020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437" +
	"4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
	"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF05" +
	"98DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB" +
	"9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B" +
	"E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718" +
	"3995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D04507A33" +
	"A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7" +
	"ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864" +
	"D87602733EC86A64521F2B18177B200CBBE117577A615D6C770988C0BAD946E2" +
	"08E24FA074E5AB3143DB5BFCE0FD108E4B82D120A92108011A723C12A787E6D7" +
	"88719A10BDBA5B2699C327186AF4E23C1A946834B6150BDA2583E9CA2AD44CE8" +
	"DBBBC2DB04DE8EF92E8EFC141FBECAA6287C59474E6BC05D99B2964FA090C3A2" +
	"233BA186515BE7ED1F612970CEE2D7AFB81BDD762170481CD0069127D5B05AA9" +
	"93B4EA988D8FDDC186FFB7DC90A6C08F4DF435C934063199FFFFFFFFFFFFFFFF"

// Size is the byte length of the group, to which A, B and S are padded.
const Size = 512

var (
	bigN = mustHex(groupHex)
	bigG = big.NewInt(5)
	bigK = new(big.Int).SetBytes(hash(pad(bigN), pad(bigG)))
)

// ErrBadValue reports a public value that is zero modulo N or malformed:
// continuing would let the peer force a known session key.
var ErrBadValue = errors.New("srp: invalid public value")

// ErrBadProof reports a proof (M1 or M2) that does not match.
var ErrBadProof = errors.New("srp: proof does not match")

func mustHex(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("srp: internal error: bad group constant")
	}
	return n
}

func hash(parts ...[]byte) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// pad is the big-endian value left-padded with zeros to Size bytes.
func pad(n *big.Int) []byte {
	return n.FillBytes(make([]byte, Size))
}

// X is the private value x = H(salt | H(identity | ":" | password)).
func X(identity, password, salt []byte) *big.Int {
	inner := hash(identity, []byte(":"), password)
	return new(big.Int).SetBytes(hash(salt, inner))
}

// Verifier is v = g^x mod N, padded, as registered at signup.
func Verifier(identity, password, salt []byte) []byte {
	return pad(new(big.Int).Exp(bigG, X(identity, password, salt), bigN))
}

func publicValue(b []byte) (*big.Int, error) {
	if len(b) == 0 || len(b) > Size {
		return nil, ErrBadValue
	}
	n := new(big.Int).SetBytes(b)
	if new(big.Int).Mod(n, bigN).Sign() == 0 {
		return nil, ErrBadValue
	}
	return n, nil
}

func scrambler(a, b *big.Int) *big.Int {
	return new(big.Int).SetBytes(hash(pad(a), pad(b)))
}

// Client is the logging-in side of one SRP session.
type Client struct {
	x, a, pubA *big.Int
	m1, k      []byte
}

// NewClient starts a session for identity (the srpUserID) and password (the
// 16-byte login key) with the account's salt. secret is the client's random
// exponent a, 32 to 64 bytes from crypto/rand.
func NewClient(identity, password, salt, secret []byte) *Client {
	a := new(big.Int).SetBytes(secret)
	return &Client{
		x:    X(identity, password, salt),
		a:    a,
		pubA: new(big.Int).Exp(bigG, a, bigN),
	}
}

// A is the client's public value, always Size bytes.
func (c *Client) A() []byte { return pad(c.pubA) }

// Proof computes M1 from the server's public value B.
func (c *Client) Proof(serverB []byte) ([]byte, error) {
	B, err := publicValue(serverB)
	if err != nil {
		return nil, err
	}
	u := scrambler(c.pubA, B)
	if u.Sign() == 0 {
		return nil, ErrBadValue
	}
	// S = (B - k*g^x) ^ (a + u*x) mod N
	base := new(big.Int).Exp(bigG, c.x, bigN)
	base.Mul(base, bigK)
	base.Sub(B, base)
	base.Mod(base, bigN)
	exp := new(big.Int).Mul(u, c.x)
	exp.Add(exp, c.a)
	S := new(big.Int).Exp(base, exp, bigN)
	c.k = hash(pad(S))
	c.m1 = hash(pad(c.pubA), pad(B), pad(S))
	return c.m1, nil
}

// VerifyServer checks the server's proof M2; a server that cannot produce it
// does not know the verifier.
func (c *Client) VerifyServer(m2 []byte) error {
	if c.m1 == nil {
		return ErrBadProof
	}
	want := hash(pad(c.pubA), c.m1, c.k)
	if subtle.ConstantTimeCompare(want, m2) != 1 {
		return ErrBadProof
	}
	return nil
}

// Server is the verifying side of one SRP session.
type Server struct {
	v, b, pubB *big.Int
}

// NewServer starts a session for a registered verifier with the server's
// random exponent b.
func NewServer(verifier, secret []byte) *Server {
	v := new(big.Int).SetBytes(verifier)
	b := new(big.Int).SetBytes(secret)
	// B = k*v + g^b mod N
	B := new(big.Int).Mul(bigK, v)
	B.Add(B, new(big.Int).Exp(bigG, b, bigN))
	B.Mod(B, bigN)
	return &Server{v: v, b: b, pubB: B}
}

// B is the server's public value, always Size bytes.
func (s *Server) B() []byte { return pad(s.pubB) }

// Verify checks the client's A and M1 and returns the server proof M2.
func (s *Server) Verify(clientA, m1 []byte) ([]byte, error) {
	A, err := publicValue(clientA)
	if err != nil {
		return nil, err
	}
	u := scrambler(A, s.pubB)
	// S = (A * v^u) ^ b mod N
	S := new(big.Int).Exp(s.v, u, bigN)
	S.Mul(S, A)
	S.Mod(S, bigN)
	S.Exp(S, s.b, bigN)
	want := hash(pad(A), pad(s.pubB), pad(S))
	if subtle.ConstantTimeCompare(want, m1) != 1 {
		return nil, ErrBadProof
	}
	return hash(pad(A), want, hash(pad(S))), nil
}
