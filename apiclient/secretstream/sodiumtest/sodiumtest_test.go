package sodiumtest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Every section must hold vectors; emptying any one is caught.
func TestCheckRefusesAnEmptySection(t *testing.T) {
	v := Load(t)
	if err := v.Check(); err != nil {
		t.Fatalf("the committed vectors fail their own check: %v", err)
	}
	for _, section := range []string{"secretstream", "secretbox", "sealedbox", "kdf", "argon2id", "generichash"} {
		p, err := Path()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		raw[section] = json.RawMessage("[]")
		b, _ = json.Marshal(raw)
		var w Vectors
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		err = w.Check()
		if err == nil || !strings.Contains(err.Error(), section) {
			t.Fatalf("emptying %s: Check said %v", section, err)
		}
	}
}

func TestVectorsComeFromLibsodium(t *testing.T) {
	if g := Load(t).Generator; !strings.HasPrefix(g, "libsodium") {
		t.Fatalf("generator %q", g)
	}
}
