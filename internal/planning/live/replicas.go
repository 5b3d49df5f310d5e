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
	From  string `json:"from,omitempty"` // the publishing Hub's id: a loop skips its own
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
// again when it heard nothing from the leader: its last wait (set from
// the leader's states as they come, see received).
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
	b, err := json.Marshal(shared{From: l.hub.id, State: sealed})
	if err != nil {
		return
	}
	r.Publish(l.name, b)
}

// received handles what another replica published: a nudge polls soon
// (when this process leads, or takes the lead); a state is handed to the
// subscribers as if polled, and gives the wait before this replica asks
// for the lease again (follow). more is false when the loop ends.
func (l *loop) received(m []byte) (wait time.Duration, more, follow bool) {
	var sh shared
	if json.Unmarshal(m, &sh) != nil {
		return 0, true, false
	}
	if sh.From == l.hub.id && sh.From != "" {
		return 0, true, false // its own state
	}
	if sh.Nudge {
		select {
		case l.wake <- struct{}{}:
		default:
		}
		return 0, true, false
	}
	if !l.polled() {
		return 0, true, false // the first state is this process's own poll
	}
	plain, err := l.key.Open(sh.State, []byte(l.name))
	if err != nil {
		return 0, true, false
	}
	var st State
	if json.Unmarshal(plain, &st) != nil {
		return 0, true, false
	}
	if st.Import != nil && Terminal(st.Import) {
		l.publish(st)
		return 0, false, false
	}
	if l.publish(st) {
		l.unchanged = 0
	} else {
		l.unchanged++
	}
	return schedule(expecting(st, l.unchanged == 0, time.Now()), l.unchanged, l.rl), true, true
}
