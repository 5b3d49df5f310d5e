// Package restcache holds what the facade shares between requests to save
// upstream calls: a coalescer that lets identical GETs in flight at the same
// moment share one call, and an optional TTL cache of GET answers. Both are
// keyed by a hash of the API key and the request path, so nothing is ever
// shared between two keys.
package restcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	"suregql/restclient"
)

// KeyHash returns a stable digest of an API key, so that maps keyed by the
// caller never hold the key itself.
func KeyHash(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:16])
}

func requestID(k restclient.RequestKey) string {
	return KeyHash(k.APIKey) + " " + k.Path
}

// Coalescer lets identical GETs (same key, same URL) that are in flight at
// the same moment share one upstream call. The first caller sends it; the
// others wait for its answer. The zero value is ready to use; set
// Generations (shared with the Cache) so that a key's reads after its own
// write never join a GET sent before it.
type Coalescer struct {
	Generations *Generations

	group   singleflight.Group
	sent    atomic.Int64
	shared  atomic.Int64
	waiting atomic.Int64
}

// Fetch implements restclient.Fetcher.
func (c *Coalescer) Fetch(ctx context.Context, key restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	id := requestID(key)
	if c.Generations != nil {
		id += " #" + strconv.FormatUint(c.Generations.Of(key), 10)
	}
	leader := false
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	ch := c.group.DoChan(id, func() (any, error) {
		leader = true
		c.sent.Add(1)
		// The call serves every waiter: the first caller's cancellation
		// must not fail the others (the HTTP client's timeout still bounds it).
		return fetch(context.WithoutCancel(ctx))
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		var gate *restclient.GateError
		refused := errors.As(r.Err, &gate)
		if leader {
			if refused {
				c.sent.Add(-1) // the gate stopped it before the network
			}
		} else {
			if refused {
				// The leader's operation was over its budget; that says
				// nothing about this caller, who asks for itself.
				c.sent.Add(1)
				return fetch(ctx)
			}
			c.shared.Add(1)
		}
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*restclient.Response), nil
	}
}

// Stats returns how many GETs the coalescer sent, how many callers were
// answered by another caller's GET, and how many callers wait for an answer
// now.
func (c *Coalescer) Stats() (sent, shared, waiting int64) {
	return c.sent.Load(), c.shared.Load(), c.waiting.Load()
}

// Generations numbers, per key and resource, the writes a key made: reads
// of a newer generation never share a cached answer or an in-flight GET
// with reads of an older one.
type Generations struct {
	mu sync.Mutex
	m  map[string]uint64 // key hash + resource -> generation
}

// Of returns the generation of the resource a request reads.
func (g *Generations) Of(key restclient.RequestKey) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[KeyHash(key.APIKey)+" "+resource(key.Path)]
}

// Invalidate starts a new generation of apiKey's resource ("chats") after
// that key wrote to it.
func (g *Generations) Invalidate(apiKey, res string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]uint64{}
	}
	g.m[KeyHash(apiKey)+" "+res]++
}

// Cache keeps successful GET answers for a TTL, per API key, in a bounded
// LRU. A key's writes invalidate its cached answers of the same resource
// (see Invalidate), so a caller never reads its own stale data.
type Cache struct {
	lru  *expirable.LRU[string, *restclient.Response]
	gens *Generations
}

// NewCache returns a cache of at most size answers, each kept for ttl.
func NewCache(size int, ttl time.Duration) *Cache {
	return &Cache{lru: expirable.NewLRU[string, *restclient.Response](size, nil, ttl), gens: &Generations{}}
}

// Generations returns the write generations the cache keys answers by;
// give them to the Coalescer too.
func (c *Cache) Generations() *Generations { return c.gens }

// resource is the first path segment: "categories", "chats", "imports".
func resource(path string) string {
	if i := strings.IndexAny(path, "/?"); i >= 0 {
		return path[:i]
	}
	return path
}

// Fetch implements restclient.Fetcher. Errors are never cached.
func (c *Cache) Fetch(ctx context.Context, key restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	id := requestID(key) + " #" + strconv.FormatUint(c.gens.Of(key), 10)
	if resp, ok := c.lru.Get(id); ok {
		return resp, nil
	}
	resp, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	c.lru.Add(id, resp)
	return resp, nil
}

// Invalidate forgets apiKey's cached answers of a resource ("chats") after
// that key wrote to it. Entries of the old generation are never read again
// and age out of the LRU.
func (c *Cache) Invalidate(apiKey, res string) { c.gens.Invalidate(apiKey, res) }

// Len returns the number of cached answers.
func (c *Cache) Len() int { return c.lru.Len() }

// Chain returns a Fetcher that passes each GET through fs in order: the
// first sees it first, the last calls the real fetch. Nil entries are
// skipped.
func Chain(fs ...restclient.Fetcher) restclient.Fetcher {
	var live []restclient.Fetcher
	for _, f := range fs {
		if f != nil {
			live = append(live, f)
		}
	}
	return chain(live)
}

type chain []restclient.Fetcher

func (c chain) Fetch(ctx context.Context, key restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	if len(c) == 0 {
		return fetch(ctx)
	}
	return c[0].Fetch(ctx, key, func(ctx context.Context) (*restclient.Response, error) {
		return c[1:].Fetch(ctx, key, fetch)
	})
}

// RateLimits remembers the last rate-limit headers seen for each key, so
// that every response can report the caller's remaining budget.
type RateLimits struct {
	mu sync.Mutex
	m  map[string]restclient.RateLimit
}

// Observe records rl for apiKey.
func (r *RateLimits) Observe(apiKey string, rl restclient.RateLimit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]restclient.RateLimit{}
	}
	r.m[KeyHash(apiKey)] = rl
}

// Get returns the last rate limit seen for apiKey.
func (r *RateLimits) Get(apiKey string) (restclient.RateLimit, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rl, ok := r.m[KeyHash(apiKey)]
	return rl, ok
}

// FamilySizes remembers how many categories each key's family (and each
// classification of it) had when last seen. It is a planning hint only
// (never data served): it tells whether one page of 100 is likely to hold
// the whole family.
type FamilySizes struct {
	mu sync.Mutex
	m  map[string]int
}

// Observe records the size of apiKey's family ("" class) or of one
// classification of it.
func (f *FamilySizes) Observe(apiKey, class string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]int{}
	}
	f.m[KeyHash(apiKey)+" "+class] = n
}

// Get returns the last size seen for apiKey's family or classification.
func (f *FamilySizes) Get(apiKey, class string) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.m[KeyHash(apiKey)+" "+class]
	return n, ok
}
