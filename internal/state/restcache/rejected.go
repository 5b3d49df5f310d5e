package restcache

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/suregql/suregql/internal/state/callerkey"
)

// Defaults of RejectedKeys.
const (
	// DefaultRejectedKeyTTL is how long a key the upstream answered 401 is
	// refused without asking again. A revoked key stays revoked, so longer
	// would save more; a minute bounds how long a key the upstream
	// rejected by mistake (an authentication outage of its own) stays
	// refused here after the upstream accepts it again.
	DefaultRejectedKeyTTL = time.Minute
	// DefaultMaxRejectedKeys bounds RejectedKeys: about 1.5 MB at most.
	// Past it the least recently rejected key is forgotten, and costs one
	// call again at its next request: strangers cycling through random
	// keys cannot grow memory, and each of their keys costs its one call
	// anyway.
	DefaultMaxRejectedKeys = 10_000
)

// RejectedKeys remembers, for a short time, the keys the upstream answered
// 401 (unknown, expired or revoked), so that their requests are refused
// locally instead of each costing an upstream call that answers 401 again.
// Keys are known by their ids (callerkey.Key.ID, a keyed hash), never by
// the keys themselves. It lives in the memory of each process, also with
// Redis: each replica learns a key's rejection from its own first 401, so
// a rejected key costs at most one call per replica per TTL, where a
// shared memory would cost a Redis round trip on every request of every
// key to save those few calls. The zero value remembers
// DefaultMaxRejectedKeys keys for DefaultRejectedKeyTTL.
type RejectedKeys struct {
	// TTL is how long a rejection is remembered; 0 means
	// DefaultRejectedKeyTTL.
	TTL time.Duration
	// Max bounds the keys remembered; 0 means DefaultMaxRejectedKeys.
	Max int

	init sync.Once
	mu   sync.Mutex       // orders a rejection and the removal of an expired one
	keys byKey[time.Time] // until when each key is refused
}

// byID returns the map of rejections, sized once.
func (r *RejectedKeys) byID() *lru.Cache[string, time.Time] {
	r.init.Do(func() {
		r.keys.max = r.Max
		if r.keys.max <= 0 {
			r.keys.max = DefaultMaxRejectedKeys
		}
	})
	return r.keys.lru()
}

func (r *RejectedKeys) ttl() time.Duration {
	if r.TTL > 0 {
		return r.TTL
	}
	return DefaultRejectedKeyTTL
}

// Reject remembers that the upstream answered key 401 at now.
func (r *RejectedKeys) Reject(key callerkey.Key, now time.Time) {
	id := key.ID()
	if id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID().Add(id, now.Add(r.ttl()))
}

// Rejected reports whether the upstream answered key 401 less than the
// TTL before now. An expired rejection is forgotten.
func (r *RejectedKeys) Rejected(key callerkey.Key, now time.Time) bool {
	id := key.ID()
	if id == "" {
		return false
	}
	until, ok := r.byID().Peek(id) // the common case: no lock of ours
	if !ok {
		return false
	}
	if now.Before(until) {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Removed only if it is still this rejection: another request may
	// have rejected the key again since.
	if again, ok := r.byID().Peek(id); ok && again.Equal(until) {
		r.byID().Remove(id)
	}
	return false
}

// Len returns how many keys are remembered, expired ones included until
// they are asked about or pushed out.
func (r *RejectedKeys) Len() int { return r.byID().Len() }
