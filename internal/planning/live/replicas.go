package live

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// nudge is what Expect publishes: a message was sent through a replica.
var nudge = []byte(`{"nudge":true}`)

// shared is what a loop publishes to the replicas.
type shared struct {
	Nudge bool   `json:"nudge,omitempty"`
	State []byte `json:"state,omitempty"` // a State, sealed with the caller's key
}

// sharedName names a loop among the replicas: a hash of the keyed hash of
// its key and of its resource, so Redis sees neither a key nor an id.
func sharedName(k loopKey) string {
	h := sha256.Sum256([]byte(k.key + "\x00" + string(k.res.Kind) + "\x00" + k.res.ID))
	return hex.EncodeToString(h[:])
}

// lead reports whether this process polls the loop's resource: always
// without replicas; with them, when it holds (or takes) the lease, kept
// for twice the wait before the next poll and a poll's timeout, so that
// another replica takes over when this one stops.
func (l *loop) lead() bool {
	r := l.hub.opts.Replicas
	if r == nil {
		return true
	}
	ttl := 2*max(l.lastWait, FastStep) + pollTimeout
	return r.Lead(l.name, ttl)
}

// followWait is how long a follower waits before it asks for the lease
// again: as long as the leader's wait at most, so it takes over soon
// after the leader stops.
func (l *loop) followWait() time.Duration {
	return max(l.lastWait, FastStep)
}

// share publishes st to the replicas, sealed with the caller's key.
func (l *loop) share(st State) {
	r := l.hub.opts.Replicas
	if r == nil {
		return
	}
	plain, err := json.Marshal(st)
	if err != nil {
		return
	}
	sealed, err := l.key.Seal(plain, []byte(l.name))
	if err != nil {
		return
	}
	b, err := json.Marshal(shared{State: sealed})
	if err != nil {
		return
	}
	r.Publish(l.name, b)
}

// received handles what another replica published: a nudge polls soon
// (when this process leads, or takes the lead); a state is handed to the
// subscribers as if polled. It reports whether the loop goes on.
func (l *loop) received(m []byte) bool {
	var sh shared
	if json.Unmarshal(m, &sh) != nil {
		return true
	}
	if sh.Nudge {
		select {
		case l.wake <- struct{}{}:
		default:
		}
		return true
	}
	if !l.polled() {
		return true // the first state is this process's own poll
	}
	plain, err := l.key.Open(sh.State, []byte(l.name))
	if err != nil {
		return true
	}
	var st State
	if json.Unmarshal(plain, &st) != nil {
		return true
	}
	l.publish(st)
	return st.Import == nil || !Terminal(st.Import)
}
