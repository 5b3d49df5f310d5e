package restcache

import (
	"sync"
	"time"
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
// not accepted yet (AcceptedKeys, in this process): a key seen for the
// first time, a mistyped one, a stranger's random one. Each such call
// costs the upstream a request (a stranger's, a 401), and every 401 takes
// a place in RejectedKeys: unbounded, a flood of new keys reached the
// upstream at the flood's rate (2,960 a second in issue 25) and pushed
// older rejections out, each then costing a call again. The bound is a
// token bucket shared by every such key, as a gateway limits its failed
// authentications: Burst calls at once, Rate a second after. It holds no
// keys: the planner's gate asks AcceptedKeys whether a call's key is new,
// and takes a token only then; an answer that makes a key accepted gives
// its token back (GiveBack), and the key is free of the bound from then
// on, until a 401 makes it new again. It is per process, as RejectedKeys
// and AcceptedKeys are.
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

	init   sync.Once
	mu     sync.Mutex
	tokens float64
	last   time.Time // when tokens was counted
}

func (n *NewKeyCalls) setUp() {
	n.init.Do(func() {
		if n.Rate <= 0 {
			n.Rate = DefaultNewKeyRate
		}
		if n.Burst <= 0 {
			n.Burst = DefaultNewKeyBurst
		}
		n.tokens = float64(n.Burst)
	})
}

// Admit reports whether a call of a key the upstream has not accepted may
// be sent at now: while the bucket holds a call, which it takes. Refused,
// wait is how long until it holds one again.
func (n *NewKeyCalls) Admit(now time.Time) (wait time.Duration, ok bool) {
	n.setUp()
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

// GiveBack returns the call a new key's first request took, once an
// answer made the key accepted (AcceptedKeys.Learn reported it): a valid
// key costs the bound nothing.
func (n *NewKeyCalls) GiveBack() {
	n.setUp()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tokens = min(n.tokens+1, float64(n.Burst))
}

// RejectionsWithin returns how many keys the calls this admits may have
// answered 401 within d: what RejectedKeys must hold so that none is
// pushed out before d (its TTL).
func (n *NewKeyCalls) RejectionsWithin(d time.Duration) int {
	n.setUp()
	return n.Burst + int(n.Rate*d.Seconds()+0.5)
}
