package restcache

import (
	"sync"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
)

// Defaults of NewKeyCalls. With them a flood of new keys cannot push out
// of RejectedKeys (DefaultMaxRejectedKeys) a rejection less than its TTL
// old: within a minute at most DefaultNewKeyBurst plus a minute of
// DefaultNewKeyRate calls, 10,000 in all, can be answered 401.
const (
	DefaultNewKeyBurst = 1_000
	DefaultNewKeyRate  = float64(DefaultMaxRejectedKeys-DefaultNewKeyBurst) / 60 // 150 a second
)

// NewKeyCalls bounds the upstream calls made with keys the upstream has
// not accepted yet (in this process): a key seen for the first time, a
// mistyped one, a stranger's random one. Each such call costs the upstream
// a request (a stranger's, a 401), and every 401 takes a place in
// RejectedKeys: unbounded, a flood of new keys reached the upstream at
// the flood's rate (2,960 a second in issue 25) and pushed older
// rejections out, each then costing a call again. The bound is a token
// bucket shared by every such key, as a gateway limits its failed
// authentications: Burst calls at once, Rate a second after. A key whose
// answer shows the upstream accepts it gives its token back and is free
// of the bound from then on (the keys accepted are remembered, at most
// MaxAccepted of them, the least recently accepted forgotten first); a
// 401 makes it new again. It is per process, as RejectedKeys is.
//
// The bound is global, not per client address: the address a server sees
// behind a load balancer is the balancer's, and a flood from many
// addresses would pass any per-address bound. While a flood spends it, a
// key new to this process (a user's first request, or any after a
// restart) is refused RATE_LIMITED for about a second at a time; keys
// already accepted are not affected. The zero value has the defaults.
type NewKeyCalls struct {
	// Rate is how many calls a second the bucket refills; 0 means
	// DefaultNewKeyRate.
	Rate float64
	// Burst is how many calls it holds; 0 means DefaultNewKeyBurst.
	Burst int
	// MaxAccepted bounds the accepted keys remembered; 0 means
	// DefaultMaxKeys.
	MaxAccepted int

	init     sync.Once
	mu       sync.Mutex
	tokens   float64
	last     time.Time       // when tokens was counted
	accepted byKey[struct{}] // keys the upstream accepted
}

func (n *NewKeyCalls) setUp() {
	n.init.Do(func() {
		if n.Rate <= 0 {
			n.Rate = DefaultNewKeyRate
		}
		if n.Burst <= 0 {
			n.Burst = DefaultNewKeyBurst
		}
		n.accepted.max = n.MaxAccepted
		n.tokens = float64(n.Burst)
	})
}

// Admit reports whether a call of key may be sent at now: always for a
// key the upstream accepted; for another while the bucket holds a call,
// which it takes. Refused, wait is how long until it holds one again.
func (n *NewKeyCalls) Admit(key callerkey.Key, now time.Time) (wait time.Duration, ok bool) {
	n.setUp()
	if n.accepted.lru().Contains(key.ID()) {
		return 0, true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refill(now)
	if n.tokens >= 1 {
		n.tokens--
		return 0, true
	}
	return time.Duration((1 - n.tokens) / n.Rate * float64(time.Second)), false
}

// refill adds what Rate gave since last; n.mu is held.
func (n *NewKeyCalls) refill(now time.Time) {
	if n.last.IsZero() || now.Before(n.last) {
		n.last = now
		return
	}
	n.tokens = min(n.tokens+now.Sub(n.last).Seconds()*n.Rate, float64(n.Burst))
	n.last = now
}

// Accepted records that the upstream answered key as only a key it
// accepts is answered: a key new until then gives back the call its
// first request took.
func (n *NewKeyCalls) Accepted(key callerkey.Key) {
	n.setUp()
	if key.ID() == "" {
		return
	}
	if n.accepted.lru().Contains(key.ID()) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.accepted.lru().Contains(key.ID()) {
		return // accepted by a call alongside
	}
	n.accepted.lru().Add(key.ID(), struct{}{})
	n.tokens = min(n.tokens+1, float64(n.Burst))
}

// Forget makes key new again (the upstream rejected it).
func (n *NewKeyCalls) Forget(key callerkey.Key) {
	n.setUp()
	n.accepted.lru().Remove(key.ID())
}

// RejectionsWithin returns how many keys the calls this admits may have
// answered 401 within d: what RejectedKeys must hold so that none is
// pushed out before d (its TTL).
func (n *NewKeyCalls) RejectionsWithin(d time.Duration) int {
	n.setUp()
	return n.Burst + int(n.Rate*d.Seconds()+0.5)
}

// Len returns how many accepted keys are remembered.
func (n *NewKeyCalls) Len() int {
	n.setUp()
	return n.accepted.lru().Len()
}
