// Package loader holds the per-operation data layer of the facade: the
// caller's keyed upstream client, a memo that sends each GET once per
// operation, the by-id category loader primed by every list answer, and the
// call meter behind extensions.upstream.
//
// A *Loaders is made for each GraphQL request by Middleware and read with
// For; nothing in it outlives the request or is shared between API keys.
package loader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vikstrous/dataloadgen"

	"suregql/restcache"
	"suregql/restclient"
)

// ErrNoAPIKey is returned by For when the request carried no X-Api-Key.
var ErrNoAPIKey = errors.New("no API key: send your Sure API key in the X-Api-Key header")

// ErrBadAPIKey is returned by For when X-Api-Key is not a plausible key
// (too long, or characters no header may carry).
var ErrBadAPIKey = errors.New("the X-Api-Key header is not a valid API key")

// maxKeyLen bounds accepted API keys; Sure's keys are 64 hex characters.
const maxKeyLen = 512

type ctxKey struct{}

// Shared is what the data layer shares between requests; build it once per
// server.
type Shared struct {
	// Upstream is the client of the Sure server, without a key.
	Upstream *restclient.Client
	// Coalescer lets identical GETs of one key in flight at the same moment
	// share a call; nil turns that off.
	Coalescer *restcache.Coalescer
	// Cache keeps GET answers per key for a TTL; nil turns it off.
	Cache *restcache.Cache
	// RateLimits remembers the last rate-limit headers of each key; nil
	// keeps them per request only.
	RateLimits *restcache.RateLimits
	// FamilySizes remembers each key's family size, to plan lookups; nil
	// keeps it per request only.
	FamilySizes *restcache.FamilySizes
	// Generations numbers each key's writes, for the Cache and the
	// Coalescer (which must share it); nil when neither needs it.
	Generations *restcache.Generations
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
	// Now is the clock for rate-limit windows; nil means time.Now.
	Now func() time.Time
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

// forgetKey drops everything shared about apiKey: the upstream answered
// 401, so the key is unknown or revoked and must leave nothing behind, nor
// keep being served from the cache.
func (s *Shared) forgetKey(apiKey string) {
	if s.RateLimits != nil {
		s.RateLimits.Forget(apiKey)
	}
	if s.FamilySizes != nil {
		s.FamilySizes.Forget(apiKey)
	}
	if s.Cache != nil {
		s.Cache.Forget(apiKey)
	}
}

// Loaders is the data layer of one GraphQL request.
type Loaders struct {
	shared *Shared
	apiKey string
	keyErr error
	client *restclient.Client
	memo   *memo
	sends  atomic.Int64 // requests let through the gate: the calls made
	firsts atomic.Int64 // first attempts among them: what the budget counts
	// refusedOutOfQuota is set once the gate refused a request because the
	// key is known to be out of quota.
	refusedOutOfQuota atomic.Bool

	mu        sync.Mutex
	rateLimit *restclient.RateLimit

	categoryByID *dataloadgen.Loader[string, *restclient.Category]
	parentByID   *dataloadgen.Loader[string, *restclient.Category]
	children     *dataloadgen.Loader[ParentKey, []*restclient.Category]
	kids         childrenState
	family       familyState
}

// batchWait is how long a loader waits for more keys before planning a
// batch. gqlgen resolves the nodes of a list concurrently, so the fields of
// one list arrive within microseconds; the wait is generous so that a busy
// machine still batches a whole list.
const batchWait = time.Millisecond

// New returns the data layer for one request made with apiKey.
func New(shared *Shared, apiKey string) *Loaders {
	l := &Loaders{shared: shared, apiKey: apiKey, keyErr: checkKey(apiKey)}
	var cache, coalescer restclient.Fetcher
	if shared.Cache != nil {
		cache = shared.Cache
	}
	if shared.Coalescer != nil {
		coalescer = shared.Coalescer
	}
	// Memo first (nothing twice per operation), then the shared cache, then
	// coalescing with other requests in flight, then the network.
	l.memo = newMemo(restcache.Chain(cache, coalescer))
	l.client = shared.Upstream.WithAPIKey(apiKey).WithObserver(l.observe).WithGate(l.gate).WithFetcher(l.memo)
	// The upstream has no batch-by-ids endpoint: a batch of ids is answered
	// by the family's first page where it can (see lookUp), the rest by one
	// GET per id, in parallel; lists prime the loaders so that most ids
	// cost nothing.
	l.categoryByID = dataloadgen.NewLoader(l.fetchCategories, dataloadgen.WithWait(batchWait))
	l.parentByID = dataloadgen.NewLoader(l.fetchParents, dataloadgen.WithWait(batchWait))
	l.children = dataloadgen.NewLoader(l.planChildren, dataloadgen.WithWait(batchWait))
	l.family.m = map[string]*familyEntry{}
	l.family.first = map[string]*restclient.CategoryPage{}
	l.kids.entries = map[string]*childEntry{}
	l.kids.expected = map[string]ParentKey{}
	return l
}

// Middleware makes a *Loaders for every request from its X-Api-Key header.
// Only that header is read: an Authorization header is never forwarded.
func Middleware(shared *Shared, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := New(shared, r.Header.Get("X-Api-Key"))
		next.ServeHTTP(w, r.WithContext(WithLoaders(r.Context(), l)))
	})
}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the request's Loaders, or nil outside a request.
func From(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	return l
}

// For returns the request's Loaders, or ErrNoAPIKey / ErrBadAPIKey when
// the caller cannot be passed upstream. Resolvers call it before any
// upstream call, so a request without a key costs none.
func For(ctx context.Context) (*Loaders, error) {
	l := From(ctx)
	if l == nil {
		return nil, ErrNoAPIKey
	}
	if l.keyErr != nil {
		return nil, l.keyErr
	}
	return l, nil
}

// KeyError returns why the request's key cannot be used, or nil.
func (l *Loaders) KeyError() error { return l.keyErr }

// Client returns the caller's upstream client: keyed, counted and memoized.
func (l *Loaders) Client() *restclient.Client { return l.client }

// Calls returns how many requests this operation sent upstream so far
// (retries included): every request passes the gate once.
func (l *Loaders) Calls() int { return int(l.sends.Load()) }

// RateLimit returns the last rate-limit headers seen for this key, in this
// operation or an earlier one, or nil.
func (l *Loaders) RateLimit() *restclient.RateLimit {
	l.mu.Lock()
	rl := l.rateLimit
	l.mu.Unlock()
	if rl != nil {
		return rl
	}
	if l.shared.RateLimits != nil {
		if seen, ok := l.shared.RateLimits.Get(l.apiKey); ok {
			return &seen
		}
	}
	return nil
}

// RefusedOutOfQuota reports whether a request of this operation was
// refused locally (RATE_LIMITED, no call) because the key is known to be
// out of quota.
func (l *Loaders) RefusedOutOfQuota() bool { return l.refusedOutOfQuota.Load() }

// observe is told of every request sent upstream, retries included; ctx
// is the one the call was sent with, so the WARN line of a failed call
// carries the request's id (for a GET shared with other requests in
// flight, the id of the request that sent it).
func (l *Loaders) observe(ctx context.Context, c restclient.Call) {
	if l.shared.Meter != nil {
		l.shared.Meter.UpstreamCall(c)
	}
	rl := c.RateLimit
	if c.Err != nil {
		rl = l.afterRefusal(c.Err, rl)
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
	if c.Status == http.StatusUnauthorized {
		l.shared.forgetKey(l.apiKey)
	}
	log := l.shared.Log
	switch {
	case log == nil:
	case c.Err != nil:
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

// afterRefusal returns the rate-limit reading of a failed call whose
// answer carried rl: a 429 without usable headers still says nothing is
// left until Retry-After.
func (l *Loaders) afterRefusal(err error, rl *restclient.RateLimit) *restclient.RateLimit {
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

// ChatsWritten records that this key sent a chat write that ended with
// err: unless the upstream certainly refused it (a 4xx, or nothing was
// sent), chat answers of this operation and in the shared cache for this
// key are forgotten, so that the key's next read sees the write.
func (l *Loaders) ChatsWritten(err error) {
	var (
		api  *restclient.APIError
		gate *restclient.GateError
	)
	if errors.As(err, &api) || errors.As(err, &gate) {
		return
	}
	l.memo.forget("chats")
	if l.shared.Generations != nil {
		l.shared.Generations.Invalidate(l.apiKey, "chats")
	}
}

// TooExpensiveError refuses upstream calls that would take the operation
// past its budget. Nothing of the refused batch was sent.
type TooExpensiveError struct {
	Budget  int // calls allowed per operation
	Spent   int // calls already made
	Planned int // calls the refused batch needed
}

func (e *TooExpensiveError) Error() string {
	return fmt.Sprintf("this field needs %d more upstream calls, but the operation has spent %d of its budget of %d",
		e.Planned, e.Spent, e.Budget)
}

// limitShare is the part of a key's hourly limit one operation may spend:
// a quarter, so that one request never takes most of a standard key's hour
// (25 of its 100 calls) and a caller can always afford a few more.
const limitShare = 4

// standardLimit is the hourly limit assumed for a key whose limit no
// answer has told yet: Sure's standard tier.
const standardLimit = 100

// Budget returns the upstream calls the operation's plan may spend: a
// quarter of the key's hourly limit (as last reported, or the standard
// tier's until an answer tells it), and never more than MaxCalls. 0 means
// no cap.
func (l *Loaders) Budget() int {
	ceiling := l.shared.MaxCalls
	if ceiling <= 0 {
		return 0
	}
	limit := standardLimit
	if rl := l.RateLimit(); rl != nil && rl.Limit > 0 {
		limit = rl.Limit
	}
	return min(ceiling, max(limit/limitShare, 1))
}

// Affordable returns a *TooExpensiveError when n more calls would take the
// operation past its budget. Planners ask before sending a batch, so that a
// batch is sent whole or not at all.
func (l *Loaders) Affordable(n int) error {
	max := l.Budget()
	if max <= 0 || n <= 0 {
		return nil
	}
	if spent := int(l.firsts.Load()); spent+n > max {
		return &TooExpensiveError{Budget: max, Spent: spent, Planned: n}
	}
	return nil
}

// gate lets a request through unless the key is known to be out of quota
// (the upstream would answer 429 and count nothing useful) or a first
// attempt would pass the operation's budget: the hard cap behind
// Affordable. Retries are counted as calls but do not spend the budget.
func (l *Loaders) gate(method, path string, attempt int) error {
	if l.shared.RateLimits != nil {
		if wait, out := l.shared.RateLimits.Exhausted(l.apiKey, l.shared.now()); out {
			l.refusedOutOfQuota.Store(true)
			return &restclient.RateLimitError{
				APIError:   restclient.APIError{Op: method + " " + path, StatusCode: http.StatusTooManyRequests, Code: "rate_limit_exceeded", Message: "refused locally: the key has no request left in this window"},
				RetryAfter: wait,
			}
		}
	}
	if attempt > 0 {
		l.sends.Add(1)
		return nil
	}
	max := int64(l.Budget())
	for {
		n := l.firsts.Load()
		if max > 0 && n >= max {
			return &TooExpensiveError{Budget: int(max), Spent: int(n), Planned: 1}
		}
		if l.firsts.CompareAndSwap(n, n+1) {
			l.sends.Add(1)
			return nil
		}
	}
}

// Category returns one category by id, from this operation's answers when
// any of them held it, or with one GET.
func (l *Loaders) Category(ctx context.Context, id string) (*restclient.Category, error) {
	return l.categoryByID.Load(ctx, id)
}

// PrimeCategories remembers categories from a list or show answer, so that
// later lookups by id (and of parents) cost nothing.
func (l *Loaders) PrimeCategories(cats []restclient.Category) {
	for i := range cats {
		l.prime(&cats[i])
	}
}

func (l *Loaders) prime(c *restclient.Category) {
	l.categoryByID.Prime(c.ID, c)
	if c.Parent == nil {
		l.parentByID.Prime(c.ID, c)
	}
}

// fetchCategories looks several ids up at once. Most families fit one
// page of 100, so when two or more ids are wanted and the family is not
// known to be larger, the family's first page is read first: one call that
// may answer every id (and their parents). Ids it does not hold cost one
// GET each, in parallel.
func (l *Loaders) fetchCategories(ctx context.Context, ids []string) ([]*restclient.Category, []error) {
	return l.lookUp(ctx, ids, l.client.GetCategory)
}

// lookUp answers ids from the family's first page where it can (see
// fromFamilyFirstPage), and the others with one, in parallel.
func (l *Loaders) lookUp(ctx context.Context, ids []string, one func(context.Context, string) (*restclient.Category, error)) ([]*restclient.Category, []error) {
	out := make([]*restclient.Category, len(ids))
	errs := make([]error, len(ids))
	if len(ids) >= 2 {
		l.fromFamilyFirstPage(ctx, ids, out, errs)
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		if out[i] == nil && errs[i] == nil {
			wg.Go(func() {
				defer recoverInto(&errs[i])
				out[i], errs[i] = one(ctx, id)
			})
		}
	}
	wg.Wait()
	return out, errs
}

// recoverInto turns a panic of a fan-out goroutine into an error: gqlgen
// recovers panics only on a resolver's own goroutine, and any other would
// end the process.
func recoverInto(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("loader: panic: %v", v)
	}
}

// fromFamilyFirstPage fills out[i] for the ids the family's first page
// holds, when the family is likely to fit that page and the budget allows
// the call. When the page holds the whole family, the other ids are not
// found, without a call each.
func (l *Loaders) fromFamilyFirstPage(ctx context.Context, ids []string, out []*restclient.Category, errs []error) {
	if !l.familyLikelySmall() || l.Affordable(1) != nil {
		return
	}
	first, err := l.familyFirstPage(ctx, "")
	if err != nil {
		// One GET per id instead would multiply the calls sent to a
		// failing upstream (or a key out of quota): report the failure.
		for i := range ids {
			errs[i] = err
		}
		return
	}
	byID := make(map[string]*restclient.Category, len(first.Categories))
	for i := range first.Categories {
		byID[first.Categories[i].ID] = &first.Categories[i]
	}
	complete := first.Pagination.TotalCount <= len(first.Categories)
	for i, id := range ids {
		out[i] = byID[id]
		if out[i] == nil && complete {
			errs[i] = &restclient.APIError{Op: "GET /categories/" + id, StatusCode: http.StatusNotFound,
				Code: "not_found", Message: "Category not found"}
		}
	}
}

// familyLikelySmall reports whether the caller's family is not known to
// exceed one page of 100 categories.
func (l *Loaders) familyLikelySmall() bool {
	n, ok := l.familySize("")
	return !ok || n <= familyPerPage
}

// familySize returns the size of the caller's family, or of one
// classification of it, when last seen: a planning hint, possibly from an
// earlier operation. A classification not seen yet takes the whole
// family's size (a slice of a large family is taken to be large too).
func (l *Loaders) familySize(class string) (int, bool) {
	if l.shared.FamilySizes == nil {
		return 0, false
	}
	if n, ok := l.shared.FamilySizes.Get(l.apiKey, class); ok || class == "" {
		return n, ok
	}
	return l.shared.FamilySizes.Get(l.apiKey, "")
}

func checkKey(key string) error {
	if key == "" {
		return ErrNoAPIKey
	}
	if len(key) > maxKeyLen {
		return ErrBadAPIKey
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return ErrBadAPIKey
		}
	}
	return nil
}

// errNoRateLimit: the upstream answered without X-RateLimit-* headers.
var errNoRateLimit = &restclient.UnavailableError{Op: "rate limit", Err: errors.New("the upstream did not report a rate limit")}
