package restcache

import (
	"context"
	"sync"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
)

// DefaultKeyCheckInterval is how long the upstream's word that a key
// stands is trusted before a stale answer is served to it while it is
// refused locally for its quota: RejectedKeys' TTL, the same minute in
// which a key revoked upstream is otherwise learnt.
const DefaultKeyCheckInterval = DefaultRejectedKeyTTL

// KeyChecks remembers, per key, when the upstream last showed the key
// stands (an answer only an authenticated key gets), or when it was last
// asked to, so that a key refused locally because it is out of quota is
// not answered from what is held for the rest of its window without the
// upstream being asked whether it still accepts the key: Sure
// authenticates a key before it counts its calls, so a key it revoked
// gets 401 where a valid one out of quota gets 429 (which costs it
// nothing, its window being spent). One such call per key per Interval
// at most; keys are known by their ids, at most Max of them (past it the
// least recently checked is forgotten, and costs one check again). It
// lives in each process's memory, as RejectedKeys does. The zero value
// is ready to use.
type KeyChecks struct {
	// Interval is how long a check holds; 0 means
	// DefaultKeyCheckInterval.
	Interval time.Duration
	// Max bounds the keys remembered; 0 means DefaultMaxKeys.
	Max int

	init sync.Once
	mu   sync.Mutex
	keys byKey[time.Time] // when each key last stood, or was last asked about
}

func (k *KeyChecks) byID() *byKey[time.Time] {
	k.init.Do(func() { k.keys.max = k.Max })
	return &k.keys
}

func (k *KeyChecks) interval() time.Duration {
	if k.Interval > 0 {
		return k.Interval
	}
	return DefaultKeyCheckInterval
}

// Stood records that the upstream answered key at now as only a key it
// accepts is answered.
func (k *KeyChecks) Stood(key callerkey.Key, now time.Time) {
	if key.ID() == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.byID().lru().Add(key.ID(), now)
}

// Due reports whether key must be checked with the upstream before a
// stale answer serves it: nothing said it stands for Interval before now.
// A true answer claims the check: the key is not due again for Interval,
// whatever the check's outcome, so that requests alongside it serve stale
// while it runs, and a check that gets no answer is not repeated at once.
func (k *KeyChecks) Due(key callerkey.Key, now time.Time) bool {
	if key.ID() == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.byID().lru()
	if last, ok := m.Get(key.ID()); ok && now.Sub(last) < k.interval() {
		return false
	}
	m.Add(key.ID(), now)
	return true
}

// Forget drops what is known of key (the upstream rejected it).
func (k *KeyChecks) Forget(key callerkey.Key) { k.byID().lru().Remove(key.ID()) }

// Len returns how many keys are remembered.
func (k *KeyChecks) Len() int { return k.byID().lru().Len() }

type staleHeldKey struct{}

// withStaleHeld returns ctx saying that, should its read fail, a cache
// holds an answer to serve stale in its place.
func withStaleHeld(ctx context.Context) context.Context {
	return context.WithValue(ctx, staleHeldKey{}, true)
}

// StaleHeld reports whether a cache holds, for the read of ctx, an answer
// it serves stale should the read fail: the gate then knows that
// refusing the call locally would answer it from what is held.
func StaleHeld(ctx context.Context) bool {
	v, _ := ctx.Value(staleHeldKey{}).(bool)
	return v
}
