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
)

// LimitError refuses a subscription past MaxPerKey or MaxTotal, before
// any call.
type LimitError struct {
	Limit string // LimitPerKey or LimitTotal
	Max   int
}

func (e *LimitError) Error() string {
	if e.Limit == LimitPerKey {
		return fmt.Sprintf("this API key has %d subscriptions open, the most one key may have; close one first", e.Max)
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
	perKey map[string]int
	total  int
	loops  map[loopKey]*loop
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
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return &Hub{opts: opts, id: hex.EncodeToString(id), perKey: map[string]int{}, loops: map[loopKey]*loop{}}
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
// poll (the resource is unknown: planner's NOT_FOUND) is returned and
// nothing stays open. A subscription past the limits is a *LimitError,
// refused before any call.
func (h *Hub) Subscribe(ctx context.Context, p *planner.Planner, res Resource) (*Subscription, error) {
	if h.draining() {
		return nil, ErrDraining
	}
	k := loopKey{key: p.Key().ID(), res: res}
	s := &sub{ch: make(chan State, 1)}
	h.mu.Lock()
	switch {
	case h.perKey[k.key] >= h.opts.MaxPerKey:
		h.mu.Unlock()
		h.meter().SubscriptionRefused(LimitPerKey)
		return nil, &LimitError{Limit: LimitPerKey, Max: h.opts.MaxPerKey}
	case h.total >= h.opts.MaxTotal:
		h.mu.Unlock()
		h.meter().SubscriptionRefused(LimitTotal)
		return nil, &LimitError{Limit: LimitTotal, Max: h.opts.MaxTotal}
	}
	h.perKey[k.key]++
	h.total++
	l := h.loops[k]
	if l == nil {
		l = newLoop(h, k, p.Renew, p.Key())
		h.loops[k] = l
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

// Close ends the subscription; the loop stops with its last subscriber.
func (s *Subscription) Close() {
	s.close.Do(func() {
		h := s.hub
		h.mu.Lock()
		delete(s.l.subs, s.s)
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
