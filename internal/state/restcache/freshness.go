package restcache

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// Window is how long an answer of one kind is served without a call: Short
// for a key whose quota is no concern (a self-hosted server limits
// nothing, a key that spent nothing of its window), Long for a key near
// its limit.
type Window struct {
	Short, Long time.Duration
}

// The window of each freshness class (README, "Freshness"), which each
// resource's description names for its list and its show
// (resource.Freshness). Categories change a few times a year, chats by
// the minute, a settled import never.
var (
	CategoriesWindow    = Window{Short: 30 * time.Second, Long: 5 * time.Minute} // resource.Slow
	ChatsWindow         = Window{Short: 3 * time.Second, Long: 30 * time.Second} // resource.Moving
	SettledImportWindow = Window{Short: 6 * time.Minute, Long: time.Hour}        // resource.Settled
	// ImportsListWindow is the window of a list of imports, all settled:
	// a moving list's.
	ImportsListWindow = ChatsWindow
)

// ClassWindow returns the window of a freshness class.
func ClassWindow(c resource.Class) Window {
	switch c {
	case resource.Slow:
		return CategoriesWindow
	case resource.Moving:
		return ChatsWindow
	case resource.Settled:
		return SettledImportWindow
	}
	return Window{}
}

// LongSpent is the share of its window's calls a key has spent when its
// answers are served at the long end of their windows: between none and
// it, the window grows in proportion.
const LongSpent = 0.9

// DefaultWindows returns the window of the answer resp of a GET at path
// (relative to /api/v1), as the description of its resource gives it
// (resource.Freshness: its list's class, or its show's for a path past
// the list, a chat's messages included); ok is false when the answer must
// never be served from freshness: one of a resource not described, or
// one holding an object of a resource that settles (an import) not
// settled yet (pending, importing, reverting), which may change by itself
// any moment. A chat awaiting its assistant's reply is never kept at all
// (see restclient.AwaitsReply).
func DefaultWindows(path string, resp *restclient.Response) (w Window, ok bool) {
	spec := resource.Of(path)
	if spec == nil {
		return Window{}, false
	}
	show := restclient.PartOf(path) != spec.Name+"/"
	class := spec.Fresh.List
	if show {
		class = spec.Fresh.Show
	}
	if !spec.Fresh.Settles {
		return ClassWindow(class), true
	}
	c := restclient.CollectionOf(spec)
	return ClassWindow(class), c != nil && c.SettledAnswer(resp, show)
}

// longestWindow is the longest DefaultWindows gives an answer of path:
// of any resource for a path of none.
func longestWindow(path string) time.Duration {
	if spec := resource.Of(path); spec != nil {
		return specLongest(spec)
	}
	var d time.Duration
	for _, spec := range resource.All {
		d = max(d, specLongest(spec))
	}
	return d
}

// specLongest is the longest window of an answer of spec.
func specLongest(spec *resource.Spec) time.Duration {
	return max(ClassWindow(spec.Fresh.List).Long, ClassWindow(spec.Fresh.Show).Long)
}

// Freshness decides, when an answer is read, whether it is served without
// a call (fresh), and how long past that it is held to answer when the
// upstream cannot (stale). The zero value serves by DefaultWindows, with
// every key at the short end, and holds nothing stale.
type Freshness struct {
	// Windows gives an answer's window; nil means DefaultWindows.
	Windows func(path string, resp *restclient.Response) (Window, bool)
	// Longest bounds what Windows gives an answer of path (how long an
	// answer must be held); nil means DefaultWindows' bound.
	Longest func(path string) time.Duration
	// Cap, when above 0, caps every window (-cache-ttl).
	Cap time.Duration
	// StaleMax is how long past its freshness an answer is held to be
	// served when the key is out of quota, the circuit is open or the
	// upstream fails (-stale-max); 0 holds none.
	StaleMax time.Duration
	// Quota returns the key's newest rate-limit reading; nil, or no
	// reading, serves the key at the short end.
	Quota func(key callerkey.Key) (restclient.RateLimit, bool)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// FixedFreshness serves every answer for ttl (0: for ever), whatever its
// kind or the key's quota, and holds nothing stale: the cache of one TTL.
func FixedFreshness(ttl time.Duration) Freshness {
	if ttl <= 0 {
		ttl = 1<<63 - 1
	}
	return Freshness{
		Windows: func(string, *restclient.Response) (Window, bool) { return Window{ttl, ttl}, true },
		Longest: func(string) time.Duration { return ttl },
	}
}

// Time returns the time of f's clock (Now), for caches that store it.
func (f *Freshness) Time() time.Time { return f.now() }

func (f *Freshness) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// window returns how long resp, read at path for key, is served without a
// call, given the key's reading rl (ok false: none): 0 when never.
func (f *Freshness) window(path string, resp *restclient.Response, rl restclient.RateLimit, ok bool, now time.Time) time.Duration {
	windows := f.Windows
	if windows == nil {
		windows = DefaultWindows
	}
	w, fresh := windows(path, resp)
	if !fresh {
		return 0
	}
	d := w.Short
	if p := Pressure(rl, ok, now); p > 0 && w.Long > w.Short {
		d += time.Duration(float64(w.Long-w.Short) * p)
	}
	if f.Cap > 0 {
		d = min(d, f.Cap)
	}
	return d
}

// Keep is how long an answer of path is held at most: its longest window
// and StaleMax past it.
func (f *Freshness) Keep(path string) time.Duration {
	longest := longestWindow(path)
	if f.Longest != nil {
		longest = f.Longest(path)
	}
	if f.Cap > 0 {
		longest = min(longest, f.Cap)
	}
	return satAdd(longest, f.StaleMax)
}

// KeepAtMost is how long any answer is held at most (Redis keeps write
// generations longer than that).
func (f *Freshness) KeepAtMost() time.Duration {
	var d time.Duration
	for _, spec := range resource.All {
		d = max(d, f.Keep(string(spec.Name)))
	}
	return d
}

func satAdd(a, b time.Duration) time.Duration {
	if a > 1<<63-1-b {
		return 1<<63 - 1
	}
	return a + b
}

// SpentShare is the share of its window's calls the key of reading rl
// (ok false: none) has spent at now, between 0 and 1: 0 for a key of a
// server that limits nothing, a reading whose window has reset, or none.
func SpentShare(rl restclient.RateLimit, ok bool, now time.Time) float64 {
	if !ok || rl.Unlimited || rl.Limit <= 0 || rl.Remaining < 0 {
		return 0
	}
	if !rl.ResetAt.IsZero() && !now.Before(rl.ResetAt) {
		return 0 // a new window
	}
	return min(float64(rl.Limit-rl.Remaining)/float64(rl.Limit), 1)
}

// RateWindow is the length of a key's rate-limit window: Sure's cloud
// counts calls per clock hour (UPSTREAM.md).
const RateWindow = time.Hour

// Pressure is how short of calls the key of reading rl is at now, from 0
// (a server that limits nothing, nothing spent) to 1 (serve at the long
// end): the larger of its share spent over LongSpent and its pace, the
// share spent over the share of its window gone by. A key that spent 10 %
// of its calls in the first 6 minutes would run out before the reset at
// that pace: it is served at the long end, as one near its limit is,
// rather than spend on short windows early what its last minutes need.
func Pressure(rl restclient.RateLimit, ok bool, now time.Time) float64 {
	spent := SpentShare(rl, ok, now)
	if spent == 0 {
		return 0
	}
	p := spent / LongSpent
	// A reset further away than a window is not a clock hour's: the pace
	// is unknown, the share spent decides alone.
	if left := rl.ResetAt.Sub(now); !rl.ResetAt.IsZero() && left < RateWindow {
		gone := float64(RateWindow-left) / float64(RateWindow)
		p = max(p, spent/gone)
	}
	return min(p, 1)
}

// Reasons an answer is served stale (restclient.Staleness.Reason).
const (
	StaleRateLimited = "rate_limited"         // the key is out of quota (a 429, or refused locally)
	StaleCircuitOpen = "circuit_open"         // the upstream's circuit breaker is open
	StaleUnavailable = "upstream_unavailable" // no answer, a 5xx, a timeout
)

// StaleReasons are the reasons, in the order metrics report them.
var StaleReasons = []string{StaleRateLimited, StaleCircuitOpen, StaleUnavailable}

// StaleReason returns why a GET that failed with err may be answered from
// what is held, or "" when it may not: an answer about the key or the
// request (401, 403, 404, 422…), a refusal of the operation's budget, a
// caller gone.
func StaleReason(err error) string {
	var (
		limited *restclient.RateLimitError
		unavail *restclient.UnavailableError
	)
	switch {
	case errors.As(err, &limited):
		return StaleRateLimited
	case errors.Is(err, restclient.ErrCircuitOpen):
		return StaleCircuitOpen
	case errors.As(err, &unavail) && !unavail.NoRoute:
		return StaleUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return StaleUnavailable
	}
	return ""
}

// staleAnswer returns held as an answer served stale: a Response of its
// own (the held one is shared), saying its age and reason.
func staleAnswer(held *restclient.Response, age time.Duration, reason string) *restclient.Response {
	return &restclient.Response{Status: held.Status, Body: held.Body, RateLimit: held.RateLimit,
		Stale: &restclient.Staleness{Age: age, Reason: reason}}
}

type revalidateKey struct{}

// WithRevalidate returns ctx whose reads are never answered from what a
// cache holds, fresh or stale, but whose answers are stored: a poll made
// so refreshes what page views read.
func WithRevalidate(ctx context.Context) context.Context {
	return context.WithValue(ctx, revalidateKey{}, true)
}

// Revalidating reports whether ctx was made by WithRevalidate.
func Revalidating(ctx context.Context) bool {
	v, _ := ctx.Value(revalidateKey{}).(bool)
	return v
}

// CacheCounts is what an answer cache answered since it was made.
type CacheCounts struct {
	Fresh  int64 // lookups answered from freshness, no call
	Stale  int64 // lookups answered stale, after the upstream could not
	Misses int64 // lookups passed on to the upstream
	// StaleBy counts the stale answers by reason (StaleReasons).
	StaleBy map[string]int64
}

type atomicCounter = atomic.Int64

// staleCounters counts a cache's answers (CacheCounts).
type staleCounters struct {
	fresh, stale, misses atomicCounter
	by                   [3]atomicCounter // StaleReasons' order
}

func (s *staleCounters) staleFor(reason string) {
	s.stale.Add(1)
	for i, r := range StaleReasons {
		if r == reason {
			s.by[i].Add(1)
		}
	}
}

func (s *staleCounters) counts() CacheCounts {
	c := CacheCounts{Fresh: s.fresh.Load(), Stale: s.stale.Load(), Misses: s.misses.Load(), StaleBy: map[string]int64{}}
	for i, r := range StaleReasons {
		c.StaleBy[r] = s.by[i].Load()
	}
	return c
}

// Lookup is what a cache found for a read, decided at read time by its
// Freshness.
type Lookup struct {
	Held   *restclient.Response // nil: nothing held
	Age    time.Duration
	Fresh  bool // served without a call
	Stale  bool // may be served when the upstream cannot answer
	Expire bool // past everything: drop it
}

// Judge decides what an answer held for key at path, stored at, is worth
// now, given the key's reading rl (ok false: none), for a read made with
// ctx.
func (f *Freshness) Judge(ctx context.Context, path string, held *restclient.Response, at time.Time, rl restclient.RateLimit, ok bool) Lookup {
	now := f.now()
	age := max(now.Sub(at), 0)
	if age >= f.Keep(path) {
		return Lookup{Expire: true}
	}
	l := Lookup{Held: held, Age: age}
	if Revalidating(ctx) {
		return l
	}
	w := f.window(path, held, rl, ok, now)
	l.Fresh = age < w
	l.Stale = !l.Fresh && f.StaleMax > 0 && age < satAdd(w, f.StaleMax)
	return l
}

// serve runs fetch for a read whose lookup is l, and answers: the held
// answer when fresh, the upstream's when it answers, else the held one as
// stale when l allows and the failure is one stale answers stand in for.
// counts is told which.
func serve(ctx context.Context, l Lookup, fetch func(context.Context) (*restclient.Response, error), counts *staleCounters) (resp *restclient.Response, fetched bool, err error) {
	if l.Fresh {
		counts.fresh.Add(1)
		return l.Held, false, nil
	}
	if l.Stale {
		ctx = withStaleHeld(ctx)
	}
	resp, err = fetch(ctx)
	if err != nil && l.Stale {
		if reason := StaleReason(err); reason != "" {
			counts.staleFor(reason)
			return staleAnswer(l.Held, l.Age, reason), false, nil
		}
	}
	counts.misses.Add(1)
	return resp, err == nil, err
}

// Serve is serve for caches of other packages (redisstate).
func (s *StaleCounters) Serve(ctx context.Context, l Lookup, fetch func(context.Context) (*restclient.Response, error)) (resp *restclient.Response, fetched bool, err error) {
	return serve(ctx, l, fetch, &s.c)
}

// StaleCounters counts a cache's answers for other packages' caches.
type StaleCounters struct{ c staleCounters }

// Counts returns what was counted.
func (s *StaleCounters) Counts() CacheCounts { return s.c.counts() }
