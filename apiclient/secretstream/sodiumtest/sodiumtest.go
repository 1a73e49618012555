// Package sodiumtest loads the reference vectors that libsodium itself
// produced, from testdata/vectors/libsodium.json at the module root (a
// copy of libsodium 1.0.18's own output), for quak's tests. Expected values always come from that file, never from quak.
package sodiumtest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Vectors is the content of libsodium.json. Binary fields are hex.
type Vectors struct {
	Generator    string         `json:"generator"`
	Secretstream []Secretstream `json:"secretstream"`
	Secretbox    []struct {
		Key, Nonce, Plaintext, Ciphertext Hex
	} `json:"secretbox"`
	Sealedbox []struct {
		PublicKey  Hex `json:"public_key"`
		SecretKey  Hex `json:"secret_key"`
		Plaintext  Hex `json:"plaintext"`
		Ciphertext Hex `json:"ciphertext"`
	} `json:"sealedbox"`
	KDF []struct {
		Context   string `json:"context"`
		SubkeyID  uint64 `json:"subkey_id"`
		SubkeyLen int    `json:"subkey_len"`
		MasterKey Hex    `json:"master_key"`
		Subkey    Hex    `json:"subkey"`
	} `json:"kdf"`
	Argon2id []struct {
		Password Hex    `json:"password_utf8_hex"`
		OpsLimit uint32 `json:"opslimit"`
		MemLimit uint64 `json:"memlimit"`
		Salt     Hex    `json:"salt"`
		Key      Hex    `json:"key"`
	} `json:"argon2id"`
	GenericHash []struct {
		InputLen  int `json:"input_len"`
		InputSeed int `json:"input_seed"`
		OutputLen int `json:"output_len"`
		Hash      Hex `json:"hash"`
	} `json:"generichash"`
}

// Secretstream is one stream: the plaintext (made by Pattern) cut into
// ChunkSize pieces, the last tagged FINAL. Ciphertext is only present for
// short streams; long ones are checked by CiphertextSHA256.
type Secretstream struct {
	PlaintextLen     int `json:"plaintext_len"`
	ChunkSize        int `json:"chunk_size"`
	PlaintextSeed    int `json:"plaintext_seed"`
	Key              Hex `json:"key"`
	Header           Hex `json:"header"`
	CiphertextLen    int `json:"ciphertext_len"`
	CiphertextSHA256 Hex `json:"ciphertext_sha256"`
	Ciphertext       Hex `json:"ciphertext"`
}

// Hex is a byte string written as hex in JSON.
type Hex []byte

// UnmarshalJSON decodes a hex string.
func (h *Hex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

// Pattern is the vectors' plaintext rule: byte i is (i*131 + seed) mod 256.
func Pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + seed)
	}
	return b
}

// Path is where the vectors live: $QUAK_VECTORS if set, else
// testdata/vectors/libsodium.json under the module root.
func Path() (string, error) {
	if p := os.Getenv("QUAK_VECTORS"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "vectors", "libsodium.json"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Load reads the vectors and fails the test when they are missing: a test
// that silently checks nothing is worse than a red one.
func Load(tb testing.TB) *Vectors {
	tb.Helper()
	p, err := Path()
	if err != nil {
		tb.Fatalf("locating libsodium vectors: %v", err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatalf("libsodium vectors must be at %s: %v", p, err)
	}
	var v Vectors
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("parsing %s: %v", p, err)
	}
	if err := v.Check(); err != nil {
		tb.Fatalf("%s: %v", p, err)
	}
	return &v
}

// Check fails when any section a test relies on is empty: a test that
// silently checks nothing is worse than a red one.
func (v *Vectors) Check() error {
	for _, s := range []struct {
		name string
		n    int
	}{
		{"secretstream", len(v.Secretstream)},
		{"secretbox", len(v.Secretbox)},
		{"sealedbox", len(v.Sealedbox)},
		{"kdf", len(v.KDF)},
		{"argon2id", len(v.Argon2id)},
		{"generichash", len(v.GenericHash)},
	} {
		if s.n == 0 {
			return fmt.Errorf("the %s section holds no vectors", s.name)
		}
	}
	return nil
}
