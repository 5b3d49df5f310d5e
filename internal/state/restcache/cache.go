package restcache

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// Cache keeps successful GET answers for a TTL, per API key, in a bounded
// LRU. A key's writes invalidate its cached answers of the same resource
// (see Invalidate), so a caller never reads its own stale data, and a key
// the upstream rejects loses every cached answer at once (Forget).
type Cache struct {
	lru  *expirable.LRU[string, *restclient.Response]
	gens *Generations

	mu    sync.Mutex
	byKey map[string]map[string]struct{}           // key hash -> ids cached for it
	holds byKey[map[restclient.Resource]time.Time] // key hash -> resources not kept until

	hits, misses atomic.Int64
}

// NewCache returns a cache of at most size answers, each kept for ttl.
func NewCache(size int, ttl time.Duration) *Cache {
	c := &Cache{byKey: map[string]map[string]struct{}{}}
	c.lru = expirable.NewLRU(size, c.unindex, ttl)
	// A key whose write generations are forgotten (too many keys) must not
	// read answers cached before its writes: its answers go too.
	c.gens = NewGenerations(DefaultMaxKeys, c.dropKeyHash)
	return c
}

// Generations returns the write generations the cache keys answers by;
// give them to the Coalescer too.
func (c *Cache) Generations() *Generations { return c.gens }

// FetchAs implements KeyedFetcher. Errors are never cached.
func (c *Cache) FetchAs(ctx context.Context, key callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	id := requestID(key, path) + " #" + strconv.FormatUint(c.gens.Of(key, path), 10)
	if resp, ok := c.lru.Get(id); ok {
		c.hits.Add(1)
		return resp, nil
	}
	c.misses.Add(1)
	resp, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	if restclient.AwaitsReply(path, resp) || c.held(key, path) {
		return resp, nil // the reply is on its way: never kept
	}
	// The LRU calls unindex (which locks c.mu) when Add evicts: add first,
	// index after, never holding c.mu around the LRU.
	c.lru.Add(id, resp)
	kh := keyOfID(id)
	c.mu.Lock()
	ids := c.byKey[kh]
	if ids == nil {
		ids = map[string]struct{}{}
		c.byKey[kh] = ids
	}
	ids[id] = struct{}{}
	c.mu.Unlock()
	return resp, nil
}

// Hold keeps no answer of key's resource for d (Holder).
func (c *Cache) Hold(key callerkey.Key, res restclient.Resource, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.holds.lru().Get(key.ID())
	if !ok {
		m = map[restclient.Resource]time.Time{}
		c.holds.lru().Add(key.ID(), m)
	}
	m[res] = time.Now().Add(d)
}

// held reports whether answers of path's resource are not kept for key.
func (c *Cache) held(key callerkey.Key, path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, _ := c.holds.lru().Peek(key.ID())
	until, ok := m[restclient.ResourceOf(path)]
	return ok && time.Now().Before(until)
}

// Invalidate forgets key's cached answers of a resource after
// that key wrote to it. Entries of the old generation are never read again
// and age out of the LRU.
func (c *Cache) Invalidate(key callerkey.Key, res restclient.Resource) { c.gens.Invalidate(key, res) }

// Forget drops every answer cached for key and its write generations: the
// upstream said the key is not (or no longer) valid.
func (c *Cache) Forget(key callerkey.Key) {
	kh := key.ID()
	c.dropKeyHash(kh)
	c.gens.forget(kh)
}

func (c *Cache) dropKeyHash(kh string) {
	c.mu.Lock()
	ids := c.byKey[kh]
	delete(c.byKey, kh)
	c.mu.Unlock()
	for id := range ids {
		c.lru.Remove(id)
	}
}

// unindex is the LRU's eviction callback (expiry, size or Remove).
func (c *Cache) unindex(id string, _ *restclient.Response) {
	kh := keyOfID(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ids := c.byKey[kh]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(c.byKey, kh)
		}
	}
}

// Stats returns how many GETs the cache answered (hits) and how many it
// passed on (misses), since it was made.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

// Len returns the number of cached answers.
func (c *Cache) Len() int { return c.lru.Len() }
