package facade

import (
	"net/http"
	"sync"

	"github.com/suregql/suregql/internal/state/callerkey"
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
// as "other". Keys are known by their callers' ids (keyed hashes, never
// the keys), at most maxAcceptedKeys of them.
type acceptedKeys struct {
	mu  sync.RWMutex
	ids map[string]struct{}
}

func newAcceptedKeys() *acceptedKeys {
	return &acceptedKeys{ids: map[string]struct{}{}}
}

// has reports whether the upstream accepted the caller with this id ("" never).
func (a *acceptedKeys) has(id string) bool {
	if a == nil || id == "" {
		return false
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := a.ids[id]
	return ok
}

// learn records the upstream's answer status to a request made with key:
// a 2xx accepts the key, a 401 forgets it (revoked). It is
// planner.Shared.Answered.
func (a *acceptedKeys) learn(key callerkey.Key, status int) {
	id := key.ID()
	if id == "" {
		return
	}
	accepted := status >= 200 && status < 300
	if !accepted && status != http.StatusUnauthorized {
		return
	}
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
