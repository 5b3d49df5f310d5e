// Package live serves the subscriptions (chatMessageAdded, importUpdated):
// a Hub runs one poll loop per caller key and resource, whatever the
// number of subscribers (every tab of a user shares it), and hands each
// subscriber every state the loop read. A poll is an upstream call of the
// key, made through a new planner of the key (the gate, the metrics, the
// rate-limit readings: as any other call), and never spends the reserve a
// limited key keeps for page views.
//
// The schedule (see schedule):
//
//   - while something is expected (a message sent through the facade; a
//     chat whose newest message is the user's, written less than
//     ReplyWindow ago; a reply this poll saw change, which Sure may still
//     be writing; an import not terminal): after 1 s (2 s for a limited
//     key), then doubling after each poll that did not see the assistant's
//     message appear or grow (an import's steps and the user's own
//     message do not restart it), up to a cap: 5 s for a key without
//     limit (self-hosted), and for a limited key the interval at which
//     polls would spend a quarter of its hourly limit in an hour (144 s
//     for a 100/h key);
//   - otherwise (a quiet chat): every 30 s for a key without limit, every
//     10 minutes for a limited key;
//   - a limited key whose remaining calls are at or under a quarter of
//     its limit (its reserve, the budget of one page view) is not polled
//     until its window resets.
//
// With Options.Replicas (Redis), one replica polls each loop for all of
// them: the one holding the loop's lease; the others push what it
// publishes (replicas.go).
package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// Kind is a resource kind a subscription watches.
type Kind string

// Kinds of resources.
const (
	KindChat   Kind = "chat"
	KindImport Kind = "import"
)

// Resource is what one loop polls.
type Resource struct {
	Kind Kind
	ID   string
}

// State is what one poll read: the chat with its newest page of
// messages, or the import.
type State struct {
	Chat   *restclient.Chat
	Import *restclient.Import
}

// PollFunc reads res with p, a new planner of the loop's key (one call).
// FirstRead(ctx) tells the loop's first read, the subscriber's starting
// state, which may be answered as a query of it would (from what is kept
// fresh); a later poll is made to find a change.
type PollFunc func(ctx context.Context, p *planner.Planner, res Resource) (State, error)

type firstReadKey struct{}

// FirstRead reports whether ctx is that of a loop's first read.
func FirstRead(ctx context.Context) bool { return ctx.Value(firstReadKey{}) != nil }

// ReadUpstream is the poll the facade wires by default: the chat's page
// holding its newest messages (the overflow page, one call), or the
// import.
func ReadUpstream(ctx context.Context, p *planner.Planner, res Resource) (State, error) {
	if res.Kind == KindChat {
		c, err := p.Chat(ctx, res.ID, planner.ChatWant{NewestOnly: true})
		return State{Chat: c}, err
	}
	imp, err := planner.Show(ctx, p, restclient.Imports, res.ID)
	return State{Import: imp}, err
}

// Meter counts subscriptions, their events and their polls; package
// metrics implements it.
type Meter interface {
	SubscriptionOpened(resource string, delta int)
	SubscriptionEvent(resource string)
	SubscriptionPoll(resource string, sent bool)
	SubscriptionRefused(limit string)
}

// Options configure a Hub.
type Options struct {
	// Poll reads a resource; nil means ReadUpstream.
	Poll PollFunc
	// MaxPerKey and MaxTotal bound the open subscriptions of one key and
	// of the process; 0 means DefaultMaxPerKey and DefaultMaxTotal.
	MaxPerKey, MaxTotal int
	// Meter counts; nil counts nothing.
	Meter Meter
	// Log receives a line per failed poll; nil discards.
	Log *slog.Logger
	// Draining is closed when the server shuts down: every subscription
	// completes, so that the server drains. nil: never.
	Draining <-chan struct{}
	// Replicas, when set, makes the loops of every replica act as one
	// (redisstate.Live): one replica polls a key's resource and publishes
	// what it read to the others. nil: each process polls for its own.
	Replicas Replicas
	// MaxUnproven bounds the subscriptions of keys not proven yet (see
	// Subscribe) waiting for their first poll, over every key: strangers
	// with made-up keys take at most this share of MaxTotal, whatever
	// the upstream's latency. 0 means MaxTotal/DefaultUnprovenShare, at
	// least 1.
	MaxUnproven int
}

// Replicas is what the loops of several processes share.
type Replicas interface {
	// Lead takes or renews the lease on name for ttl, and reports whether
	// this process holds it.
	Lead(name string, ttl time.Duration) bool
	// Publish sends payload to the processes following name.
	Publish(name string, payload []byte)
	// Follow delivers what is published on name until stop is called.
	Follow(name string) (msgs <-chan []byte, stop func())
}

// Defaults of Options.
const (
	DefaultMaxPerKey = 10
	DefaultMaxTotal  = 1000
	// DefaultUnprovenShare: subscriptions of keys not proven yet take at
	// most a twentieth of MaxTotal (50 of 1,000) while their first poll
	// is out.
	DefaultUnprovenShare = 20
)

// Schedule constants (see the package comment).
const (
	FastStep          = time.Second
	UnlimitedFastCap  = 5 * time.Second
	UnlimitedQuiet    = 30 * time.Second
	LimitedQuiet      = 10 * time.Minute
	pollTimeout       = 15 * time.Second
	maxFailureBackoff = 5 * time.Minute
)

// Codes and limits of refused subscriptions.
const (
	CodeLimitExceeded = "SUBSCRIPTION_LIMIT_EXCEEDED"
	LimitPerKey       = "perKey"
	LimitTotal        = "total"
	// LimitUnproven: MaxUnproven, the share of keys the upstream has not
	// accepted yet.
	LimitUnproven = "unprovenKeys"
)

// LimitError refuses a subscription past MaxPerKey, MaxTotal or
// MaxUnproven, before any call.
type LimitError struct {
	Limit string // LimitPerKey, LimitTotal or LimitUnproven
	Max   int
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitPerKey:
		return fmt.Sprintf("this API key has %d subscriptions open, the most one key may have; close one first", e.Max)
	case LimitUnproven:
		return fmt.Sprintf("the server is starting %d subscriptions of API keys the Sure server has not accepted yet, the most it starts at once; try again in a moment", e.Max)
	}
	return fmt.Sprintf("the server has %d subscriptions open, the most it serves; try again later", e.Max)
}

// ErrDraining refuses a subscription while the server shuts down.
var ErrDraining = errors.New("the server is shutting down; subscribe again (another replica answers)")

// Hub runs the poll loops. Its methods are safe for concurrent use.
type Hub struct {
	opts Options
	id   string // names its publications among the replicas

	mu     sync.Mutex
	perKey map[string]int // subscriptions of each key, pending or not
	total  int
	loops  map[loopKey]*loop
	// unproven counts the subscriptions of keys not proven that wait for
	// their loop's first poll (MaxUnproven).
	unproven int
	// proving is the one loop of a key not proven whose first poll is
	// out: the key's other new loops wait for its answer.
	proving map[string]*loop
}

type loopKey struct {
	key string // the caller's keyed identity
	res Resource
}

// New returns a Hub.
func New(opts Options) *Hub {
	if opts.Poll == nil {
		opts.Poll = ReadUpstream
	}
	if opts.MaxPerKey <= 0 {
		opts.MaxPerKey = DefaultMaxPerKey
	}
	if opts.MaxTotal <= 0 {
		opts.MaxTotal = DefaultMaxTotal
	}
	if opts.MaxUnproven <= 0 {
		opts.MaxUnproven = max(opts.MaxTotal/DefaultUnprovenShare, 1)
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return &Hub{
		opts: opts, id: hex.EncodeToString(id), perKey: map[string]int{}, loops: map[loopKey]*loop{},
		proving: map[string]*loop{},
	}
}

// Subscription is one subscriber's view of a loop: First, the state when
// it started, then every state that differs from the one before on C,
// closed when the loop ends (the import is terminal, the resource is gone,
// the server drains). Close it when done.
type Subscription struct {
	First State
	C     <-chan State

	hub   *Hub
	l     *loop
	s     *sub
	close sync.Once
}

// Subscribe opens a subscription of p's key to res: it joins the key's
// loop of res, or starts it and waits for its first poll. An error of that
// poll (the resource is unknown: planner's NOT_FOUND; the key rejected)
// is returned and nothing stays open. A subscription past the limits is a
// *LimitError, refused before any call.
//
// A key is proven once the upstream accepted it (p.Accepted: the one
// record of accepted keys, which every answer feeds, a first poll's
// included). Until then its subscriptions are held to MaxUnproven while
// their first poll is out, so that made-up keys against a slow upstream
// cannot fill MaxTotal, and a key polls for one resource at a time: its
// subscriptions to other resources wait for that first answer, so a key
// the upstream rejects costs one call (RejectedKeys refuses the others
// without one), not one per resource.
func (h *Hub) Subscribe(ctx context.Context, p *planner.Planner, res Resource) (*Subscription, error) {
	if h.draining() {
		return nil, ErrDraining
	}
	k := loopKey{key: p.Key().ID(), res: res}
	s := &sub{ch: make(chan State, 1)}
	h.mu.Lock()
	for {
		proof := h.proving[k.key]
		if proof == nil || h.loops[k] != nil || p.Accepted() {
			break
		}
		h.mu.Unlock()
		select {
		case <-proof.first:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		h.mu.Lock()
	}
	l := h.loops[k]
	// A subscription waits for a first poll unless it joins a loop that
	// has answered (a failed one is ending: it will be told the error).
	unproven := !p.Accepted() && (l == nil || !l.polled())
	var refused *LimitError
	switch {
	case h.perKey[k.key] >= h.opts.MaxPerKey:
		refused = &LimitError{Limit: LimitPerKey, Max: h.opts.MaxPerKey}
	case h.total >= h.opts.MaxTotal:
		refused = &LimitError{Limit: LimitTotal, Max: h.opts.MaxTotal}
	case unproven && h.unproven >= h.opts.MaxUnproven:
		refused = &LimitError{Limit: LimitUnproven, Max: h.opts.MaxUnproven}
	}
	if refused != nil {
		h.mu.Unlock()
		h.meter().SubscriptionRefused(refused.Limit)
		return nil, refused
	}
	h.perKey[k.key]++
	h.total++
	if unproven {
		s.unproven = true
		h.unproven++
	}
	if l == nil {
		l = newLoop(h, k, p.Renew, p.Key())
		h.loops[k] = l
		if unproven {
			h.proving[k.key] = l
		}
		go l.run()
	}
	l.subs[s] = struct{}{}
	h.mu.Unlock()
	h.meter().SubscriptionOpened(string(res.Kind), 1)
	sub := &Subscription{C: s.ch, hub: h, l: l, s: s}
	select {
	case <-l.first:
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	}
	h.mu.Lock()
	first, err := l.last, l.firstErr
	h.mu.Unlock()
	if err != nil {
		sub.Close()
		return nil, err
	}
	sub.First = *first
	return sub, nil
}

// settleLocked records that l's first poll answered (err nil) or failed:
// its subscribers wait no more, and l no longer tries to prove its key
// (an answer of the upstream accepting it did, in Shared.Accepted).
// Called under h.mu, as l.first is closed.
func (h *Hub) settleLocked(l *loop, err error) {
	l.firstErr = err
	close(l.first)
	if h.proving[l.k.key] == l {
		delete(h.proving, l.k.key)
	}
	for s := range l.subs {
		if s.unproven {
			s.unproven = false
			h.unproven--
		}
	}
}

// Err is why the subscription ended on its own, once C is closed: the
// key rejected by the upstream (revoked) or the resource gone, as the
// poll that found it failed; nil when it ended otherwise (an import
// terminal, the server draining, Close).
func (s *Subscription) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.l.endErr
}

// Close ends the subscription; the loop stops with its last subscriber.
func (s *Subscription) Close() {
	s.close.Do(func() {
		h := s.hub
		h.mu.Lock()
		delete(s.l.subs, s.s)
		if s.s.unproven {
			h.unproven--
		}
		h.perKey[s.l.k.key]--
		if h.perKey[s.l.k.key] <= 0 {
			delete(h.perKey, s.l.k.key)
		}
		h.total--
		if len(s.l.subs) == 0 && h.loops[s.l.k] == s.l {
			delete(h.loops, s.l.k)
			close(s.l.stop)
		}
		h.mu.Unlock()
		h.meter().SubscriptionOpened(string(s.l.k.res.Kind), -1)
	})
}

// Pushed counts an event pushed to a subscriber of kind.
func (h *Hub) Pushed(kind Kind) { h.meter().SubscriptionEvent(string(kind)) }

// Expect tells the hub that key awaits a change of res (it sent a message
// to the chat through the facade): the key's loop of res, if any, polls
// fast again.
func (h *Hub) Expect(key string, res Resource) {
	if h.opts.Replicas != nil {
		// The replica polling it may be another.
		h.opts.Replicas.Publish(sharedName(loopKey{key: key, res: res}), nudge)
	}
	h.mu.Lock()
	l := h.loops[loopKey{key: key, res: res}]
	h.mu.Unlock()
	if l != nil {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

func (h *Hub) draining() bool {
	select {
	case <-h.opts.Draining:
		return true
	default:
		return false
	}
}

func (h *Hub) meter() Meter {
	if h.opts.Meter == nil {
		return nopMeter{}
	}
	return h.opts.Meter
}

type nopMeter struct{}

func (nopMeter) SubscriptionOpened(string, int) {}
func (nopMeter) SubscriptionEvent(string)       {}
func (nopMeter) SubscriptionPoll(string, bool)  {}
func (nopMeter) SubscriptionRefused(string)     {}

// Terminal reports whether an import has reached a state it leaves no
// more on its own: the server's statusDetail.terminal when sent, else its
// status.
func Terminal(imp *restclient.Import) bool {
	if d := imp.StatusDetail; d != nil && d.Terminal != nil {
		return *d.Terminal
	}
	switch imp.Status {
	case "complete", "failed", "revert_failed":
		return true
	}
	return false
}
