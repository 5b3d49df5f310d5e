// Package callerkey turns a caller's API key into what the facade's shared
// stores know it by, once per request: an id (a keyed hash, so that no store,
// in memory or in Redis, holds the key or a plain digest of it) and, when the
// stores are outside the process, a cipher whose key is derived from the API
// key itself, so that what is stored for a key can only be read by a request
// that carries that key.
package callerkey

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"sync"
)

// idBytes is how much of the HMAC an id keeps: 128 bits, so that two keys
// never share an id by chance, in 32 hex digits.
const idBytes = 16

// info strings of the derivations, so that one secret never yields the
// same bytes for two purposes.
const (
	cipherInfo = "suregql/callerkey: answer encryption v1"
	labelInfo  = "suregql/callerkey: label v1"
)

// Ring derives Keys from API keys with one secret. A Ring is safe for
// concurrent use.
type Ring struct {
	secret  []byte
	encrypt bool
	// macs holds keyed HMAC states: Reset brings one back to its keyed
	// start, so a request costs neither hmac.New's allocations nor the
	// hashing of the key's pads.
	macs sync.Pool
}

// NewRing returns a ring keyed by secret; an empty secret gets a random
// one, good for this process only (ids then differ between processes and
// restarts: fine for state kept in memory). With encrypt, each Key also
// carries its cipher (see Key.Seal), for state kept outside the process.
func NewRing(secret []byte, encrypt bool) *Ring {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // never fails (crypto/rand panics instead)
	}
	r := &Ring{secret: append([]byte(nil), secret...), encrypt: encrypt}
	r.macs.New = func() any { return hmac.New(sha256.New, r.secret) }
	return r
}

// Key returns how the stores know apiKey. It costs one HMAC, and with
// encryption one HKDF and an AES key schedule: call it once per request.
func (r *Ring) Key(apiKey string) Key {
	return Key{id: r.hash(apiKey), aead: r.cipher(apiKey)}
}

// Label returns a keyed hash of s (32 hex digits), for names that must not
// reveal what they name (a persisted query's hash, say).
func (r *Ring) Label(s string) string { return r.hash(labelInfo + "\x00" + s) }

// Cipher returns an AEAD whose key is derived from s and the ring's secret:
// who holds neither cannot read what it sealed.
func (r *Ring) Cipher(s string) cipher.AEAD { return newAEAD(s, r.secret) }

func (r *Ring) hash(s string) string {
	m := r.macs.Get().(hash.Hash)
	m.Reset()
	_, _ = io.WriteString(m, s)
	var sum [sha256.Size]byte
	id := hex.EncodeToString(m.Sum(sum[:0])[:idBytes])
	r.macs.Put(m)
	return id
}

func (r *Ring) cipher(apiKey string) cipher.AEAD {
	if !r.encrypt {
		return nil
	}
	return newAEAD(apiKey, r.secret)
}

// newAEAD returns AES-256-GCM keyed by HKDF-SHA-256 of ikm, salted with
// the ring's secret: a dump of the store and a guessed key are not enough,
// the secret is needed too.
func newAEAD(ikm string, salt []byte) cipher.AEAD {
	k, err := hkdf.Key(sha256.New, []byte(ikm), salt, cipherInfo, 32)
	if err != nil {
		panic(err) // only for a length HKDF-SHA-256 cannot give; 32 it can
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		panic(err) // only for a key size other than 16, 24 or 32
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err) // only for a block size other than 16; AES's is 16
	}
	return aead
}

// Key is how the stores know one API key. The zero Key is not valid; get
// one from Ring.Key.
type Key struct {
	id   string
	aead cipher.AEAD // nil: the ring does not encrypt
}

// ID returns the key's id: 32 hex digits of a keyed hash of the API key.
func (k Key) ID() string { return k.id }

// Valid reports whether k came from a Ring.
func (k Key) Valid() bool { return k.id != "" }

// ErrNoCipher is returned by Seal and Open for a Key of a ring that does
// not encrypt.
var ErrNoCipher = errors.New("callerkey: this key has no cipher (the ring does not encrypt)")

// ErrOpen is returned by Open when the sealed bytes were not sealed by this
// key with this additional data (another key, another slot, tampering).
var ErrOpen = errors.New("callerkey: cannot open: not sealed by this key for this place")

// Seal encrypts plaintext with the key's cipher, binding it to ad (the
// place it is stored under, so that it cannot be moved to another), and
// returns a random nonce followed by the ciphertext.
func (k Key) Seal(plaintext, ad []byte) ([]byte, error) {
	if k.aead == nil {
		return nil, ErrNoCipher
	}
	return Seal(k.aead, plaintext, ad), nil
}

// Open decrypts what Seal returned for the same ad; ErrOpen when it cannot.
func (k Key) Open(sealed, ad []byte) ([]byte, error) {
	if k.aead == nil {
		return nil, ErrNoCipher
	}
	return Open(k.aead, sealed, ad)
}

// Seal encrypts plaintext with aead and a random nonce, bound to ad, and
// returns the nonce followed by the ciphertext.
func Seal(aead cipher.AEAD, plaintext, ad []byte) []byte {
	out := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	_, _ = rand.Read(out) // never fails (crypto/rand panics instead)
	return aead.Seal(out, out, plaintext, ad)
}

// Open decrypts what Seal returned for the same ad; ErrOpen when it cannot.
func Open(aead cipher.AEAD, sealed, ad []byte) ([]byte, error) {
	n := aead.NonceSize()
	if len(sealed) < n+aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := aead.Open(nil, sealed[:n], sealed[n:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
