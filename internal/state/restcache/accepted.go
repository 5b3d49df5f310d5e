package restcache

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// AcceptedKeys is the one record of which API keys the upstream has
// accepted, until it rejects them. Whatever must hold strangers (random,
// mistyped or revoked keys) to less than the keys the upstream knows reads
// it, and nothing else keeps the fact:
//   - the upstream's circuit breaker counts only accepted keys' calls, and
//     only they probe (restclient.Client.WithBreaker);
//   - calls of keys not accepted come out of one bucket (NewKeyCalls,
//     through the planner's gate);
//   - an operation's name gets its own metrics series, and a persisted
//     query is registered, only for an accepted key (facade);
//   - subscriptions of keys not accepted hold a small share of the slots
//     (live.Hub).
//
// The rule is restclient.Call.KeyVerdict, applied by Learn to every
// answer of the upstream, in one place (the planner's observer, which
// sees every call of every caller before the breaker hears of it): a key
// is accepted by an answer Sure gives only to a key it authenticated (a
// 2xx of the Sure API, or any answer but a 401 that carries the key's
// rate-limit reading), and forgotten at a 401. Any other answer, or none,
// changes nothing: an outage does not make keys strangers.
//
// Keys are known by their ids (callerkey.Key.ID, the keyed hash every
// store uses; restclient.Caller.ID), never by the keys. At most Max are
// remembered: past it the key least recently accepted (by its latest
// answer) is forgotten, and is a new key again until its next answer.
// Only keys the upstream authenticated enter, so strangers can neither
// fill it nor push a user's key out. It lives in each process's memory,
// also with Redis, as RejectedKeys does: it is read on hot paths (the
// breaker at every call, the metrics at every operation), where a shared
// store would cost a round trip each time; each replica learns from its
// own answers. A nil *AcceptedKeys accepts no key and learns nothing; the
// zero value is ready to use.
type AcceptedKeys struct {
	// Max bounds the keys remembered; 0 means DefaultMaxKeys.
	Max int

	init sync.Once
	keys byKey[struct{}]
}

func (a *AcceptedKeys) ids() *lru.Cache[string, struct{}] {
	a.init.Do(func() { a.keys.max = a.Max })
	return a.keys.lru()
}

// Learn applies what c's answer says of key (c.KeyVerdict): an answer
// that accepts it remembers it as the most recently accepted, a 401
// forgets it. It reports whether the answer accepted a key that was not
// accepted before it.
func (a *AcceptedKeys) Learn(key callerkey.Key, c restclient.Call) (newly bool) {
	id := key.ID()
	if a == nil || id == "" {
		return false
	}
	switch c.KeyVerdict() {
	case restclient.KeyAccepted:
		if _, known := a.ids().Get(id); known { // the common case; Get makes it the most recent
			return false
		}
		known, _ := a.ids().ContainsOrAdd(id, struct{}{}) // accepted by a call alongside?
		return !known
	case restclient.KeyRejected:
		a.ids().Remove(id)
	}
	return false
}

// Accepted reports whether the upstream has accepted key, and not
// rejected it since.
func (a *AcceptedKeys) Accepted(key callerkey.Key) bool { return a.AcceptedID(key.ID()) }

// AcceptedID is Accepted of the key with this id (callerkey.Key.ID), as
// the breaker and the metrics know a caller; never for "".
func (a *AcceptedKeys) AcceptedID(id string) bool {
	if a == nil || id == "" {
		return false
	}
	return a.ids().Contains(id)
}

// Len returns how many accepted keys are remembered.
func (a *AcceptedKeys) Len() int {
	if a == nil {
		return 0
	}
	return a.ids().Len()
}
