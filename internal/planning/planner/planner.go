package planner

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/suregql/suregql/internal/planning/flight"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

type ctxKey struct{}

// Shared is what the data layer shares between requests; build it once per
// server.
type Shared struct {
	// Upstream is the client of the Sure server, without a key.
	Upstream *restclient.Client
	// Coalescer lets identical GETs of one key in flight at the same moment
	// share a call; nil turns that off.
	Coalescer *restcache.Coalescer
	// Cache keeps GET answers per key for a TTL (in memory, or in a store
	// the replicas share); nil turns it off.
	Cache restcache.AnswerCache
	// RateLimits remembers the last rate-limit headers of each key; nil
	// keeps them per request only.
	RateLimits restcache.RateLimitStore
	// FamilySizes remembers each key's family size, to plan lookups; nil
	// keeps it per request only.
	FamilySizes restcache.FamilySizeStore
	// Generations is told of each key's writes, for the Cache and the
	// Coalescer (which must share its numbering); nil when neither needs
	// it.
	Generations restcache.Invalidator
	// MaxCalls caps the upstream calls of one operation's plan; 0 means no
	// cap. Retries of planned calls are counted as calls but do not spend
	// it: an upstream fault must not turn into QUERY_TOO_EXPENSIVE. See
	// Budget for the share of the key's hourly limit that also caps it.
	MaxCalls int
	// Log receives one WARN line per failed upstream call, and one DEBUG
	// line per other call; nil discards.
	Log *slog.Logger
	// Meter is told of every request sent upstream, retries included (for
	// metrics); nil tells no one.
	Meter Meter
	// Accepted is the record of the keys the upstream accepted
	// (restcache.AcceptedKeys): the planners feed it from every answer,
	// in observe, the one place every call of every caller is seen, and
	// before the breaker hears of the call (restclient.Client's order);
	// the breaker, the bound of new keys, metrics, persisted queries and
	// subscriptions read it. nil learns nothing: every key is new.
	Accepted *restcache.AcceptedKeys
	// Now is the clock for rate-limit windows; nil means time.Now.
	Now func() time.Time
	// Kinds remembers the kind of every id handed out to each key, so that
	// Node costs one lookup for those; nil remembers nothing between
	// operations (every node id is probed as each kind).
	Kinds *KindMemory
	// RejectedKeys remembers for a short time the keys the upstream
	// answered 401: their requests are refused locally (ErrKeyRejected),
	// at no call. nil asks the upstream every time.
	RejectedKeys *restcache.RejectedKeys
	// KeyChecks remembers when the upstream last showed each key stands:
	// a key refused locally for its quota is asked about again (one call,
	// at most one per key a minute) before a stale answer serves it, so
	// that a key revoked while out of quota is not served what is held
	// for the rest of its window. nil serves stale without asking.
	KeyChecks *restcache.KeyChecks
	// NewKeys bounds the calls of keys the upstream has not accepted yet
	// (not in Accepted; strangers' random keys among them): past it they
	// are refused (NewKeyLimitError) without a call. nil bounds nothing.
	NewKeys *restcache.NewKeyCalls
	// Traits keeps what answers showed of the upstream server (its
	// version's features, its page sizes), for every key; nil keeps them
	// in this Shared only.
	Traits restcache.TraitStore

	fallbackTraits
}

// Meter counts the requests sent upstream; package metrics implements it.
type Meter interface {
	// UpstreamCall is told of one request sent upstream, on the goroutine
	// that sent it: it must be quick.
	UpstreamCall(restclient.Call)
}

func (s *Shared) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// forgetKey drops everything shared about key: the upstream answered 401,
// so the key is unknown or revoked and must leave nothing behind, nor keep
// being served from the cache. Only its rejection is remembered, for a
// short time (RejectedKeys), by its id. (Accepted forgot it by the same
// answer, in Learn: a new key again.)
func (s *Shared) forgetKey(apiKey callerkey.Key) {
	if s.RejectedKeys != nil {
		s.RejectedKeys.Reject(apiKey, s.now())
	}
	if s.RateLimits != nil {
		s.RateLimits.Forget(apiKey)
	}
	if s.FamilySizes != nil {
		s.FamilySizes.Forget(apiKey)
	}
	if s.Cache != nil {
		s.Cache.Forget(apiKey)
	}
	if s.KeyChecks != nil {
		s.KeyChecks.Forget(apiKey)
	}
	if s.Kinds != nil {
		s.Kinds.forgetKey(keyHashOf(apiKey))
	}
}

// Planner is the data layer of one GraphQL request.
type Planner struct {
	shared *Shared
	caller callerkey.Caller // for Renew
	// apiKey is the caller's key as the stores know it (derived once per
	// request): its keyed hash and cipher, never the key itself.
	apiKey  callerkey.Key
	keyHash keyHash // names apiKey in shared.Kinds
	keyErr  error
	client  *restclient.Client
	memo    *memo
	budget  Budget
	// refusedOutOfQuota is set once the gate refused a request because the
	// key is known to be out of quota.
	refusedOutOfQuota atomic.Bool
	// stale is the oldest answer of the request read stale (noteStale).
	stale staleRecord

	mu        sync.Mutex
	rateLimit *restclient.RateLimit
	// sharedRead: the shared store's reading was read into rateLimit, once
	// per operation (a store shared by replicas costs a round trip), from
	// note when the cache read it on the way.
	sharedRead bool
	note       restcache.RateLimitNote

	known      knownCategories                               // every category an answer held
	byID       *batcher[string, *restclient.Category]        // lookups by id (parents included)
	kids       *batcher[ParentKey, []*restclient.Category]   // subcategory lists of roots
	firstPages flight.Once[string, *restclient.CategoryPage] // family first pages, by classification
	families   flight.Once[string, []*restclient.Category]   // whole family reads, by classification
	faults     failedReads                                   // family reads that failed upstream, by classification
	answered   rootFields                                    // root fields that hand out categories, once answered
	op         Operation                                     // the operation running (Begin), guarded by mu
	nodes      nodeBatch                                     // node ids, planned together (node.go)
}

// New returns the data layer for one request of caller, made at the edge
// from its X-Api-Key header. A key the upstream rejected moments ago
// (Shared.RejectedKeys) gets ErrKeyRejected as its key error: its
// operations are refused before any field resolves.
func New(shared *Shared, caller callerkey.Caller) *Planner {
	l := &Planner{shared: shared, caller: caller, apiKey: caller.Key, keyErr: caller.Err}
	if l.keyErr == nil && shared.rejected(l.apiKey) {
		l.keyErr = ErrKeyRejected
	}
	l.keyHash = keyHashOf(l.apiKey)
	l.budget = Budget{max: l.maxCalls, capped: shared.MaxCalls > 0}
	var cache, coalescer restcache.KeyedFetcher
	if shared.Cache != nil {
		cache = shared.Cache
	}
	if shared.Coalescer != nil {
		coalescer = shared.Coalescer
	}
	// Memo first (nothing twice per operation), then the shared cache, then
	// coalescing with other requests in flight, then the network.
	l.memo = newMemo(restcache.For(l.apiKey, cache, coalescer))
	l.memo.stale = l.noteStale
	l.client = shared.Upstream.For(restclient.Caller{APIKey: caller.APIKey(), ID: caller.Key.ID(), Observer: l.observe, Gate: l.countingGate, Fetcher: l.memo})
	l.byID = newBatcher(l.lookUp)
	l.kids = newBatcher(l.planParents)
	l.families.RetryErrors = true
	return l
}

// Renew returns a new Planner of l's caller and shared state: a memo and
// a budget of its own, for work that outlives l's operation (a
// subscription's poll loop reads with a new one each time).
func (l *Planner) Renew() *Planner { return New(l.shared, l.caller) }

// ErrKeyRejected is the key error of a caller whose key the upstream
// answered 401 less than Shared.RejectedKeys' TTL ago: refused without
// asking the upstream again.
var ErrKeyRejected = errors.New("the Sure server rejected this API key (invalid, expired or revoked) moments ago; it is refused without asking again for up to a minute")

// rejected reports whether the upstream answered key 401 moments ago.
func (s *Shared) rejected(key callerkey.Key) bool {
	return s.RejectedKeys != nil && s.RejectedKeys.Rejected(key, s.now())
}

// WithPlanner returns ctx carrying l, for the resolvers of its request.
func WithPlanner(ctx context.Context, l *Planner) context.Context {
	return restcache.WithRateLimitNote(context.WithValue(ctx, ctxKey{}, l), &l.note)
}

// From returns the request's Planner, or nil outside a request.
func From(ctx context.Context) *Planner {
	l, _ := ctx.Value(ctxKey{}).(*Planner)
	return l
}

// ErrNoPlanner is returned by For when the request reached the resolvers
// without passing the edge (WithPlanner): a wiring bug of the server, not
// the caller's.
var ErrNoPlanner = errors.New("planner: the request carries no planner (did the edge call WithPlanner?)")

// For returns the request's Planner, or the caller's key error
// (callerkey.ErrNoAPIKey, callerkey.ErrBadAPIKey, ErrKeyRejected) when
// the caller cannot be passed upstream. Resolvers call it before any
// upstream call, so a request without a key costs none.
func For(ctx context.Context) (*Planner, error) {
	l := From(ctx)
	if l == nil {
		return nil, ErrNoPlanner
	}
	if l.keyErr != nil {
		return nil, l.keyErr
	}
	return l, nil
}

// Key returns what the stores know the caller by: a keyed hash of its
// key (and, with Redis, a cipher derived from it), never the key itself.
func (l *Planner) Key() callerkey.Key { return l.apiKey }

// KeyError returns why the request's key cannot be used, or nil: also
// ErrKeyRejected once the upstream answered the key 401 during the
// request (a later operation of its batch is then refused whole).
func (l *Planner) KeyError() error {
	if l.keyErr == nil && l.shared.rejected(l.apiKey) {
		return ErrKeyRejected
	}
	return l.keyErr
}

// Accepted reports whether the upstream accepts the request's key: an
// answer accepted it (Shared.Accepted, restclient.Call.KeyVerdict) and
// none rejected it since. A rate-limit reading (RateLimit) is no such
// proof: a reading is also made up from a 429 without Sure's headers, a
// proxy's answer to any key.
func (l *Planner) Accepted() bool {
	return l.KeyError() == nil && l.shared.Accepted.Accepted(l.apiKey)
}

// RateLimit returns the last rate-limit headers seen for this key, in this
// operation or an earlier one, or nil.
func (l *Planner) RateLimit() *restclient.RateLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.sharedRead && l.shared.RateLimits != nil {
		l.sharedRead = true
		seen, ok, noted := l.note.Get() // read with a cached answer
		if !noted {
			seen, ok = l.shared.RateLimits.Get(l.apiKey)
			l.note.Set(seen, ok)
		}
		if ok && (l.rateLimit == nil || restclient.Newer(seen, *l.rateLimit)) {
			l.rateLimit = &seen
		}
	}
	return l.rateLimit
}

// RefusedOutOfQuota reports whether a request of this operation was
// refused locally (RATE_LIMITED, no call) because the key is known to be
// out of quota.
func (l *Planner) RefusedOutOfQuota() bool { return l.refusedOutOfQuota.Load() }

// observe is told of every request sent upstream, retries included; ctx
// is the one the call was sent with, so the WARN line of a failed call
// carries the request's id (for a GET shared with other requests in
// flight, the id of the request that sent it).
func (l *Planner) observe(ctx context.Context, c restclient.Call) {
	if l.shared.Meter != nil {
		l.shared.Meter.UpstreamCall(c)
	}
	rl := c.RateLimit
	if c.Err != nil {
		rl = l.afterRefusal(c.Err, rl)
	}
	if c.RateLimit != nil {
		l.learnRateLimit(c.RateLimit)
	}
	if rl != nil {
		l.mu.Lock()
		if l.rateLimit == nil || restclient.Newer(*rl, *l.rateLimit) {
			l.rateLimit = rl
		}
		l.mu.Unlock()
		if l.shared.RateLimits != nil {
			l.shared.RateLimits.Observe(l.apiKey, *rl)
		}
	}
	if l.shared.Accepted.Learn(l.apiKey, c) && l.shared.NewKeys != nil {
		l.shared.NewKeys.GiveBack() // the call the key's first request took
	}
	switch c.KeyVerdict() {
	case restclient.KeyRejected:
		l.shared.forgetKey(l.apiKey)
	case restclient.KeyAccepted:
		if l.shared.KeyChecks != nil && rl != nil && rl.Remaining == 0 {
			// The key stands, and its calls will be refused locally
			// until its reset: the moment its stale answers are vouched
			// for from.
			l.shared.KeyChecks.Stood(l.apiKey, l.shared.now())
		}
	}
	log := l.shared.Log
	switch {
	case log == nil:
	case c.Err != nil && !idNamesNothing(c):
		// Never the key, the query string (ids, filters) or a body.
		log.WarnContext(ctx, "upstream call failed", "endpoint", c.Endpoint, "status", c.Status,
			"duration", c.Duration.Round(time.Microsecond), "attempt", c.Attempt, "cause", failureCause(c.Err))
	case log.Enabled(ctx, slog.LevelDebug):
		// Asked first: the arguments would be boxed (allocated) for every
		// call even when the line is dropped.
		log.DebugContext(ctx, "upstream call", "endpoint", c.Endpoint, "status", c.Status,
			"duration", c.Duration.Round(time.Microsecond), "attempt", c.Attempt)
	}
}

// idNamesNothing reports whether c is a lookup by id the upstream answered
// 404: an answer (the id names nothing; node probes its kinds so), not a
// fault an operator should be warned of. A 404 on a list or a write still
// is one (a wrong base path, a route the upstream lacks).
func idNamesNothing(c restclient.Call) bool {
	return c.Status == http.StatusNotFound && c.Method == http.MethodGet && strings.HasSuffix(c.Endpoint, "/{id}")
}

// afterRefusal returns the rate-limit reading of a failed call whose
// answer carried rl: a 429 without usable headers still says nothing is
// left until Retry-After.
func (l *Planner) afterRefusal(err error, rl *restclient.RateLimit) *restclient.RateLimit {
	var limited *restclient.RateLimitError
	if !errors.As(err, &limited) || (rl != nil && rl.Remaining == 0) {
		return rl
	}
	reading := restclient.RateLimit{Limit: -1, Remaining: 0, Reset: limited.RetryAfter, ResetAt: l.shared.now().Add(limited.RetryAfter)}
	if rl != nil {
		reading.Limit = rl.Limit
	}
	return &reading
}

// failureCause names why an upstream call failed, for logs: the upstream's
// error code, or the reason callers see in extensions.reason; never a URL
// or a body.
func failureCause(err error) string {
	var (
		api     *restclient.APIError
		unavail *restclient.UnavailableError
		limited *restclient.RateLimitError
	)
	switch {
	case errors.As(err, &limited):
		return "rate_limited"
	case errors.As(err, &api):
		if api.Code != "" {
			return api.Code
		}
		return "rejected"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &unavail):
		return unavail.Reason() // the same words callers get in extensions.reason
	case errors.Is(err, context.DeadlineExceeded):
		return restclient.ReasonTimeout
	}
	return "error"
}

// chatsWritten records that this key sent a write to chat id ("": a new
// chat) that ended with err: unless the upstream certainly refused it (a
// 4xx, or nothing was sent), chat answers of this operation are
// forgotten, and in the shared cache this key's list of chats and that
// chat's answers (not its other chats'), so that the key's next read sees
// the write.
func (l *Planner) chatsWritten(err error, id string) {
	if !mayHaveWritten(err) {
		return
	}
	l.memo.forget(restclient.Chats)
	l.nodesWritten()
	if g := l.shared.Generations; g != nil {
		g.Invalidate(l.apiKey, restclient.PartOf("chats"))
		if id != "" {
			g.Invalidate(l.apiKey, restclient.PartOf("chats/"+id))
		}
	}
}

// mayHaveWritten reports whether a write that ended with err may have
// been applied: it succeeded, or its answer was lost; not when the
// upstream refused it (a 4xx) or nothing was sent.
func mayHaveWritten(err error) bool {
	var (
		api  *restclient.APIError
		gate *restclient.GateError
	)
	return !errors.As(err, &api) && !errors.As(err, &gate)
}

// awaitReply is told that this key sent a user message to chat id ("":
// a new chat not known by its id) that ended with err (a chat's first,
// or one more): unless the upstream certainly refused it, the assistant
// is writing its reply, asynchronously, so the shared cache keeps none of
// the key's chat answers for a while (restcache.ReplyWait), or until
// every chat awaiting a reply shows it: one read meanwhile would hide the
// reply for the cache's TTL.
func (l *Planner) awaitReply(err error, id string) {
	if h, ok := l.shared.Cache.(restcache.Holder); ok && mayHaveWritten(err) {
		part := restclient.Chats
		if id != "" {
			part = restclient.PartOf("chats/" + id)
		}
		h.Hold(l.apiKey, part, restcache.ReplyWait)
	}
}

// errNoRateLimit: the upstream answered without X-RateLimit-* headers.
var errNoRateLimit = &restclient.UnavailableError{Op: "rate limit", Err: errors.New("the upstream did not report a rate limit")}
