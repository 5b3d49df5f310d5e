package callerkey_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/suregql/suregql/internal/state/callerkey"
)

func TestRing_Key_ID(t *testing.T) {
	hexID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	a := callerkey.NewRing([]byte("secret-a"), false)
	b := callerkey.NewRing([]byte("secret-b"), false)
	for _, apiKey := range []string{"key-1", "k", strings.Repeat("f", 64)} {
		id := a.Key(apiKey).ID()
		if !hexID.MatchString(id) {
			t.Errorf("ID of %q = %q, want 32 lower-case hex digits", apiKey, id)
		}
		if strings.Contains(id, apiKey) {
			t.Errorf("ID of %q = %q holds the key", apiKey, id)
		}
		if again := a.Key(apiKey).ID(); again != id {
			t.Errorf("ID of %q is not stable within a ring: %q then %q", apiKey, id, again)
		}
		if other := b.Key(apiKey).ID(); other == id {
			t.Errorf("two secrets give %q the same id %q: the id is not keyed", apiKey, id)
		}
	}
	if a.Key("key-1").ID() == a.Key("key-2").ID() {
		t.Error("two API keys share an id")
	}
	if r1, r2 := callerkey.NewRing(nil, false), callerkey.NewRing(nil, false); r1.Key("key-1").ID() == r2.Key("key-1").ID() {
		t.Error("two rings without a secret give the same id: the random secret is not random")
	}
}

func TestKey_SealOpen(t *testing.T) {
	ring := callerkey.NewRing([]byte("shared by the replicas"), true)
	owner := ring.Key("key-1")
	plain := []byte(`{"name":"Groceries"}`)
	sealed, err := owner.Seal(plain, []byte("slot-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("Groceries")) {
		t.Fatalf("sealed bytes hold the plaintext: %q", sealed)
	}
	if got, err := ring.Key("key-1").Open(sealed, []byte("slot-1")); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("Open by the same key (derived again) = (%q, %v), want (%q, nil)", got, err, plain)
	}
	for _, tc := range []struct {
		name string
		key  callerkey.Key
		ad   string
	}{
		{"another API key", ring.Key("key-2"), "slot-1"},
		{"the same key under another secret", callerkey.NewRing([]byte("other secret"), true).Key("key-1"), "slot-1"},
		{"moved to another slot", owner, "slot-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := tc.key.Open(sealed, []byte(tc.ad)); !errors.Is(err, callerkey.ErrOpen) {
				t.Errorf("Open = (%q, %v), want ErrOpen", got, err)
			}
		})
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	if _, err := owner.Open(tampered, []byte("slot-1")); !errors.Is(err, callerkey.ErrOpen) {
		t.Errorf("Open of tampered bytes: err = %v, want ErrOpen", err)
	}
	if _, err := owner.Open(sealed[:5], []byte("slot-1")); !errors.Is(err, callerkey.ErrOpen) {
		t.Errorf("Open of truncated bytes: err = %v, want ErrOpen", err)
	}
	if _, err := callerkey.NewRing(nil, false).Key("key-1").Seal(plain, nil); !errors.Is(err, callerkey.ErrNoCipher) {
		t.Errorf("Seal without encryption: err = %v, want ErrNoCipher", err)
	}
}

func BenchmarkRing_Key(b *testing.B) {
	for _, encrypt := range []bool{false, true} {
		name := "in-memory"
		if encrypt {
			name = "with-cipher"
		}
		ring := callerkey.NewRing([]byte("secret"), encrypt)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ring.Key("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
			}
		})
	}
}

// A key's id is HMAC-SHA-256 of the API key under the secret, cut to 16
// bytes, however many requests derive ids at once (the ring reuses its
// HMAC states).
func TestRing_Key_IDIsTheHMACOfTheKey(t *testing.T) {
	secret := []byte("a shared secret of the replicas")
	ring := callerkey.NewRing(secret, false)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			apiKey := fmt.Sprintf("api-key-%d", i%8)
			m := hmac.New(sha256.New, secret)
			m.Write([]byte(apiKey))
			if want, got := hex.EncodeToString(m.Sum(nil)[:16]), ring.Key(apiKey).ID(); got != want {
				t.Errorf("Key(%q).ID() = %s, want %s", apiKey, got, want)
			}
		})
	}
	wg.Wait()
}

// A caller is made once from the header: a usable key goes upstream as it
// came and is known by its ring's id; an unusable one carries its error
// and neither.
func TestRing_Caller(t *testing.T) {
	ring := callerkey.NewRing([]byte("0123456789abcdef"), false)
	good := ring.Caller("demo-key")
	if good.Err != nil || good.APIKey() != "demo-key" || good.Key.ID() != ring.Key("demo-key").ID() {
		t.Errorf("Caller(demo-key) = key %q, id %q, err %v; want the key, its id, no error", good.APIKey(), good.Key.ID(), good.Err)
	}
	for key, want := range map[string]error{
		"":                       callerkey.ErrNoAPIKey,
		"demo key":               callerkey.ErrBadAPIKey,
		"demo-key\n":             callerkey.ErrBadAPIKey,
		"clé":                    callerkey.ErrBadAPIKey,
		strings.Repeat("a", 513): callerkey.ErrBadAPIKey,
		strings.Repeat("a", 512): nil,
		"a!~{}":                  nil,
	} {
		c := ring.Caller(key)
		if !errors.Is(c.Err, want) {
			t.Errorf("Caller(%q).Err = %v, want %v", key, c.Err, want)
		}
		if want != nil && (c.APIKey() != "" || c.Key.Valid()) {
			t.Errorf("Caller(%q) refused but carries key %q / id %q", key, c.APIKey(), c.Key.ID())
		}
	}
}
