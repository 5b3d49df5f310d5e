package facade

import (
	"hash/maphash"
	"net/http"
	"sync"
)

// maxAcceptedKeys bounds acceptedKeys: past it, an arbitrary key is
// forgotten for each new one (it is learned again at its next call).
const maxAcceptedKeys = 10_000

// acceptedKeys remembers which API keys the upstream accepted: those it
// answered with a 2xx (an answer Sure gives only to a key it
// authenticated), until it answers one of them 401. The metrics give an
// operation name a series of its own only when it is seen in an operation
// of such a key (see observer.record), so that a stranger, whose key the
// upstream never accepts, cannot take the label slots
// (metrics.MaxOperationNames) with names of its own: its operations count
// as "other". Keys are kept as a keyed 64-bit hash whose seed never leaves
// the process, never as themselves, and at most maxAcceptedKeys of them.
type acceptedKeys struct {
	seed maphash.Seed
	mu   sync.RWMutex
	ids  map[uint64]struct{}
}

func newAcceptedKeys() *acceptedKeys {
	return &acceptedKeys{seed: maphash.MakeSeed(), ids: map[uint64]struct{}{}}
}

func (a *acceptedKeys) id(apiKey string) uint64 { return maphash.String(a.seed, apiKey) }

// has reports whether the upstream accepted apiKey ("" never).
func (a *acceptedKeys) has(apiKey string) bool {
	if a == nil || apiKey == "" {
		return false
	}
	id := a.id(apiKey)
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := a.ids[id]
	return ok
}

// learn records the upstream's answer status to a request made with
// apiKey: a 2xx accepts the key, a 401 forgets it (revoked).
func (a *acceptedKeys) learn(apiKey string, status int) {
	if apiKey == "" {
		return
	}
	accepted := status >= 200 && status < 300
	if !accepted && status != http.StatusUnauthorized {
		return
	}
	id := a.id(apiKey)
	a.mu.RLock()
	_, known := a.ids[id]
	a.mu.RUnlock()
	if known == accepted {
		return // the common case: a known key answered again
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !accepted {
		delete(a.ids, id)
		return
	}
	if len(a.ids) >= maxAcceptedKeys {
		for old := range a.ids {
			delete(a.ids, old)
			break
		}
	}
	a.ids[id] = struct{}{}
}

// transport returns the wrapper of the upstream client's transport that
// tells a of each answer's status to the key it was sent with.
func (a *acceptedKeys) transport(rt http.RoundTripper) http.RoundTripper {
	return acceptingTransport{keys: a, next: rt}
}

type acceptingTransport struct {
	keys *acceptedKeys
	next http.RoundTripper
}

func (t acceptingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		t.keys.learn(r.Header.Get("X-Api-Key"), resp.StatusCode)
	}
	return resp, err
}
