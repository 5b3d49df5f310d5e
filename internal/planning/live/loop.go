package live

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"time"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// sub is one subscriber's channel: it holds the newest state not yet
// taken (a slow subscriber skips states, never the newest).
type sub struct {
	ch     chan State
	closed bool // by the loop's end, under Hub.mu
	// unproven: counted in Hub.unproven until the loop's first poll
	// answers (under Hub.mu).
	unproven bool
}

// loop polls one resource for one key.
type loop struct {
	hub   *Hub
	k     loopKey
	renew func() *planner.Planner // a new planner of the key, per poll
	key   callerkey.Key           // seals what is shared with the replicas
	name  string                  // the loop's name among the replicas

	// Under hub.mu:
	subs     map[*sub]struct{}
	last     *State // the newest state read; nil before the first poll
	firstErr error
	endErr   error // why a later poll ended the loop (Subscription.Err)

	first chan struct{} // closed after the first poll
	wake  chan struct{} // Expect
	stop  chan struct{} // closed when the last subscriber leaves

	// The loop goroutine's own:
	unchanged int  // polls since the last change (or Expect): the backoff
	failures  int  // polls failed in a row
	nudged    bool // Expect came since the last poll
	lastWait  time.Duration
	rl        *restclient.RateLimit // the key's reading at the last poll
}

func newLoop(h *Hub, k loopKey, renew func() *planner.Planner, key callerkey.Key) *loop {
	return &loop{
		hub: h, k: k, renew: renew, key: key, name: sharedName(k), subs: map[*sub]struct{}{},
		first: make(chan struct{}), wake: make(chan struct{}, 1), stop: make(chan struct{}),
	}
}

// run polls until the resource ends, the last subscriber leaves or the
// server drains; then every subscriber's channel is closed.
func (l *loop) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer l.end()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var shared <-chan []byte
	if r := l.hub.opts.Replicas; r != nil {
		msgs, stop := r.Follow(l.name)
		defer stop()
		shared = msgs
	}
	for {
		select {
		case <-timer.C:
		case m := <-shared:
			wait, more, follow := l.received(m)
			if !more {
				return
			}
			if follow {
				// The leader's cadence: this replica asks for the lease
				// as often, and takes over soon after the leader stops.
				l.lastWait = wait
				timer.Reset(wait)
			}
			continue
		case <-l.wake:
			// A message was sent: its reply is expected in seconds.
			// (Before the first poll, that poll is due now anyway.)
			if l.polled() {
				l.unchanged, l.nudged = 0, true
				timer.Reset(firstStep(l.rl))
			}
			continue
		case <-l.stop:
			return
		case <-l.hub.opts.Draining:
			return
		}
		wait, more := l.pollOnce(ctx)
		if !more {
			return
		}
		l.lastWait = wait
		timer.Reset(wait)
	}
}

// end closes every subscriber's channel and forgets the loop.
func (l *loop) end() {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.loops[l.k] == l {
		delete(h.loops, l.k)
	}
	if !l.polled() {
		h.settleLocked(l, ErrDraining)
	}
	for s := range l.subs {
		if !s.closed {
			s.closed = true
			close(s.ch)
		}
	}
}

// pollOnce polls (unless the key keeps its reserve) and returns how long
// to wait before the next poll, and whether to go on.
func (l *loop) pollOnce(ctx context.Context) (time.Duration, bool) {
	p := l.renew()
	rl := p.RateLimit()
	kind := string(l.k.res.Kind)
	// The first state is owed to the subscriber (one call, as a query
	// of it would cost); later polls keep the key's reserve.
	if wait, keep := reserve(rl, time.Now()); keep && l.polled() {
		l.hub.meter().SubscriptionPoll(kind, false)
		return wait, true
	}
	// With replicas, the one holding the loop's lease polls and publishes;
	// the others follow (the first poll of each is its subscriber's).
	leads := l.lead()
	if !leads && l.polled() {
		l.hub.meter().SubscriptionPoll(kind, false)
		return l.followWait(), true
	}
	if !l.polled() {
		ctx = context.WithValue(ctx, firstReadKey{}, true)
	}
	pctx, cancel := context.WithTimeout(ctx, pollTimeout)
	st, err := l.hub.opts.Poll(pctx, p, l.k.res)
	cancel()
	l.hub.meter().SubscriptionPoll(kind, true)
	if err != nil {
		return l.failed(err, p.RateLimit())
	}
	l.failures = 0
	if leads {
		l.share(st)
	}
	changed := l.publish(st)
	if st.Import != nil && Terminal(st.Import) {
		return 0, false
	}
	switch {
	case changed && replied(st):
		// A reply appeared or grew: Sure may still be writing it.
		l.unchanged = 0
	case changed:
		// The user's own message showed, or an import moved on: the
		// reply, or the import's next step, is no nearer for it; the
		// backoff goes on (a 100/h key would spend a call a second
		// again at each step).
	default:
		l.unchanged++
	}
	expecting := l.nudged || expecting(st, changed, time.Now())
	l.nudged = false
	l.rl = p.RateLimit()
	return schedule(expecting, l.unchanged, l.rl), true
}

// polled reports whether the first poll answered.
func (l *loop) polled() bool {
	select {
	case <-l.first:
		return true
	default:
		return false
	}
}

// failed handles a failed poll: the first ends the loop (its subscriber
// gets the error: an unknown chat is NOT_FOUND); a resource gone later,
// or a key the upstream rejects (401), ends it too; anything else is
// retried, backing off.
func (l *loop) failed(err error, rl *restclient.RateLimit) (time.Duration, bool) {
	if !l.polled() {
		l.hub.mu.Lock()
		l.hub.settleLocked(l, err)
		l.hub.mu.Unlock()
		return 0, false
	}
	// The resource gone, or the key rejected (revoked: polling on would
	// ask again each time RejectedKeys forgets it, for as long as the
	// subscriber stays connected): the loop ends, and its subscribers
	// are told why (Subscription.Err).
	if nf := new(planner.NotFoundError); errors.As(err, &nf) || keyRejected(err) {
		l.hub.mu.Lock()
		l.endErr = err
		l.hub.mu.Unlock()
		return 0, false
	}
	l.hub.opts.Log.Warn("subscription poll failed", "resource", string(l.k.res.Kind), "error", err)
	l.failures++
	wait := FastStep << min(l.failures+2, 8)
	if rl != nil && !rl.Unlimited && rl.Remaining == 0 && !rl.ResetAt.IsZero() {
		wait = max(wait, time.Until(rl.ResetAt))
	}
	return min(wait, maxFailureBackoff), true
}

// keyRejected reports whether err says the upstream rejects the key:
// a 401, or the planner's refusal of a key answered 401 moments ago.
func keyRejected(err error) bool {
	if errors.Is(err, planner.ErrKeyRejected) {
		return true
	}
	var api *restclient.APIError
	return errors.As(err, &api) && api.StatusCode == http.StatusUnauthorized
}

// publish records st and hands it to every subscriber when it differs
// from the state before; it reports whether it did.
func (l *loop) publish(st State) bool {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.last == nil {
		l.last = &st
		h.settleLocked(l, nil)
		return true
	}
	if sameState(*l.last, st) {
		return false
	}
	l.last = &st
	for s := range l.subs {
		offer(s.ch, st)
	}
	return true
}

// offer puts st in ch, replacing a state not yet taken.
func offer(ch chan State, st State) {
	for {
		select {
		case ch <- st:
			return
		default:
			select {
			case <-ch:
			default:
			}
		}
	}
}

// sameState reports whether two reads show the same: the same messages
// (ids, contents, updates) or the same import.
func sameState(a, b State) bool {
	if a.Chat != nil && b.Chat != nil {
		return reflect.DeepEqual(a.Chat.Messages, b.Chat.Messages)
	}
	if a.Import != nil && b.Import != nil {
		return a.Import.Status == b.Import.Status && reflect.DeepEqual(a.Import.StatusDetail, b.Import.StatusDetail) &&
			a.Import.UpdatedAt.Equal(b.Import.UpdatedAt)
	}
	return false
}

// reserve reports whether a limited key must keep its remaining calls
// for page views, and for how long: until its window resets. It keeps a
// quarter of its limit (the budget of one operation) at the start of its
// window, less as the reset nears (fewer page views are still to come),
// never under a twentieth, nor under one call (5 calls of 100: a couple
// of page views, and what the facade holds answers stale past that).
func reserve(rl *restclient.RateLimit, now time.Time) (time.Duration, bool) {
	if rl == nil || rl.Unlimited || rl.Limit <= 0 || rl.Remaining < 0 {
		return 0, false
	}
	if rl.Remaining > reserved(rl, now) {
		return 0, false
	}
	wait := LimitedQuiet
	if !rl.ResetAt.IsZero() {
		wait = max(rl.ResetAt.Sub(now), FastStep)
	}
	return wait, true
}

// replied reports whether st is a chat whose newest message is the
// assistant's.
func replied(st State) bool {
	return st.Chat != nil && len(st.Chat.Messages) > 0 && st.Chat.Messages[len(st.Chat.Messages)-1].Role == "assistant"
}

// firstStep is the first wait while something is expected: FastStep for
// a key without limit, twice that for a limited one (or one not read
// yet), whose calls are counted: a reply takes Sure seconds anyway.
func firstStep(rl *restclient.RateLimit) time.Duration {
	if rl != nil && rl.Unlimited {
		return FastStep
	}
	return 2 * FastStep
}

// reserved is how many calls a limited key keeps at now (see reserve).
func reserved(rl *restclient.RateLimit, now time.Time) int {
	keep := float64(rl.Limit) / 4
	if left := rl.ResetAt.Sub(now); !rl.ResetAt.IsZero() && left < rateWindow {
		keep *= max(float64(left)/float64(rateWindow), 0)
	}
	return max(int(keep), rl.Limit/20, 1)
}

// rateWindow is a key's rate-limit window: Sure's cloud counts calls per
// clock hour.
const rateWindow = time.Hour

// schedule returns the wait before the next poll (package comment):
// unchanged is the number of polls since the last change.
func schedule(expecting bool, unchanged int, rl *restclient.RateLimit) time.Duration {
	switch {
	case expecting:
		return min(firstStep(rl)<<min(unchanged, 10), fastCap(rl))
	case rl != nil && rl.Unlimited:
		return UnlimitedQuiet
	}
	return LimitedQuiet
}

// fastCap is the longest wait between polls while something is expected:
// UnlimitedFastCap without a limit; with one, the interval at which polls
// spend a quarter of the hourly limit in an hour.
func fastCap(rl *restclient.RateLimit) time.Duration {
	switch {
	case rl != nil && rl.Unlimited:
		return UnlimitedFastCap
	case rl == nil || rl.Limit <= 0:
		return time.Hour / 25 // as for a standard key of 100 an hour
	}
	return max(time.Hour/time.Duration(max(rl.Limit/4, 1)), UnlimitedFastCap)
}

// expecting reports whether st is about to change: an import not
// terminal; a chat whose newest message is the user's, written less than
// ReplyWindow ago (the reply is on its way), or the assistant's that this
// poll saw change (Sure may still be writing it: one more poll tells).
func expecting(st State, changed bool, now time.Time) bool {
	if st.Import != nil {
		return !Terminal(st.Import)
	}
	if st.Chat == nil || len(st.Chat.Messages) == 0 {
		return false
	}
	newest := st.Chat.Messages[len(st.Chat.Messages)-1]
	if now.Sub(newest.UpdatedAt) >= restclient.ReplyWindow {
		return false
	}
	return newest.Role == "user" || changed
}
