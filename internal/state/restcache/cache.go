package restcache

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// Cache keeps successful GET answers per API key in a bounded LRU, each
// with the time it arrived: whether one is served without a call (fresh),
// or only when the upstream cannot answer (stale), is decided when it is
// read, by its Freshness (the kind of answer, the key's quota). A key's
// writes invalidate its cached answers of the same resource (see
// Invalidate), so a caller never reads its own stale data, and a key the
// upstream rejects loses every cached answer at once (Forget). Past its
// bounds the key holding the most gives up its oldest answers first
// (keyedAnswers): no key's reads push another's out.
type Cache struct {
	answers *keyedAnswers
	gens    *Generations
	fresh   Freshness

	mu    sync.Mutex
	holds byKey[map[restclient.Resource]time.Time] // key hash -> parts (or resources) not kept until

	counts staleCounters
}

// held is an answer the cache holds, and when it arrived.
type held struct {
	resp *restclient.Response
	at   time.Time
}

// NewCache returns a cache of at most size answers, each served for ttl
// (0: until evicted) whatever its kind, and none stale
// (FixedFreshness).
func NewCache(size int, ttl time.Duration) *Cache {
	return NewFreshCache(size, FixedFreshness(ttl))
}

// NewFreshCache returns a cache of at most size answers, served by f.
func NewFreshCache(size int, f Freshness) *Cache {
	c := &Cache{answers: newKeyedAnswers(size), fresh: f}
	// A key whose write generations are forgotten (too many keys) must not
	// read answers cached before its writes: its answers go too.
	c.gens = NewGenerations(DefaultMaxKeys, c.dropKeyHash)
	return c
}

// LimitBytes bounds the memory the cache's answers take to about n bytes
// (answerCost): past it the key holding the most bytes gives up its least
// recently used answers first. The count bound alone would let 10,000
// large answers (a page of 100 categories is about 30 KB of JSON, a
// chat's page of long replies more) outgrow a small container. Call it
// before the cache is used; it returns c.
func (c *Cache) LimitBytes(n int64) *Cache {
	c.answers.maxBytes = n
	return c
}

// answerCost estimates the memory an answer takes while held: its body,
// the Go values it is decoded into once read (restclient keeps them with
// the answer, and they take about twice the JSON's bytes), and the
// entry's own bookkeeping.
func answerCost(id string, resp *restclient.Response) int64 {
	return int64(3*len(resp.Body) + 2*len(id) + 512)
}

// Generations returns the write generations the cache keys answers by;
// give them to the Coalescer too.
func (c *Cache) Generations() *Generations { return c.gens }

// FetchAs implements KeyedFetcher. Errors are never cached; an answer held
// stands in for one when the upstream cannot answer within its Freshness'
// StaleMax (Response.Stale says so).
func (c *Cache) FetchAs(ctx context.Context, key callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	forgotten := c.gens.Forgotten(key) // before the generation is read
	id := requestID(key, path) + " #" + strconv.FormatUint(c.gens.Of(key, path), 10)
	var l Lookup
	if h, ok := c.answers.get(id); ok {
		var rl restclient.RateLimit
		var known bool
		if c.fresh.Quota != nil {
			rl, known = c.fresh.Quota(key)
		}
		if l = c.fresh.Judge(ctx, path, h.resp, h.at, rl, known); l.Expire {
			c.answers.remove(id)
		}
	}
	asked := time.Now()
	resp, fetched, err := serve(ctx, l, fetch, &c.counts)
	if !fetched {
		return resp, err
	}
	if restclient.ReplyCame(path, resp) {
		c.release(key, path, asked)
	}
	if restclient.AwaitsReply(path, resp) || c.held(key, path) {
		return resp, nil // the reply is on its way: never kept
	}
	if c.gens.Forgotten(key) != forgotten || !c.answers.add(id, held{resp: resp, at: c.fresh.now()}) {
		return resp, nil
	}
	if c.gens.Forgotten(key) != forgotten {
		c.answers.remove(id) // forgotten while it was added
	}
	return resp, nil
}

// Hold keeps no answer of key's resource for d (Holder). res is the part
// awaiting a change ("chats/<id>": a chat awaiting its reply), or the
// resource when which part is not known (a new chat whose answer was
// lost): the resource is held while any of its parts is.
func (c *Cache) Hold(key callerkey.Key, res restclient.Resource, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.holds.lru().Get(key.ID())
	if !ok {
		m = map[restclient.Resource]time.Time{}
		c.holds.lru().Add(key.ID(), m)
	}
	now := time.Now()
	for r, until := range m {
		if !now.Before(until) {
			delete(m, r) // a key's holds are as many as its chats awaiting a reply
		}
	}
	m[res] = now.Add(d)
}

// release ends key's hold of the chat read at path if it began before
// asked: an answer asked for after the message was sent shows the
// assistant's reply, so what the hold kept from the cache (the list of
// chats, its counts) may be kept again, unless another chat still awaits
// its reply. A chat with no hold of its own ends the hold of a chat not
// known by its id. A hold that began later is another message's.
func (c *Cache) release(key callerkey.Key, path string, asked time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, _ := c.holds.lru().Peek(key.ID())
	part := restclient.PartOf(path)
	if _, ok := m[part]; !ok {
		part = restclient.ResourceOf(path)
	}
	if until, ok := m[part]; ok && until.Add(-ReplyWait).Before(asked) {
		delete(m, part)
	}
}

// held reports whether answers of path's resource are not kept for key:
// a hold of the resource or of any of its parts is on.
func (c *Cache) held(key callerkey.Key, path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, _ := c.holds.lru().Peek(key.ID())
	res, now := restclient.ResourceOf(path), time.Now()
	for r, until := range m {
		if restclient.ResourceOf(string(r)) == res && now.Before(until) {
			return true
		}
	}
	return false
}

// Invalidate forgets key's cached answers of a resource after
// that key wrote to it. Entries of the old generation are never read again
// and age out of the LRU.
func (c *Cache) Invalidate(key callerkey.Key, res restclient.Resource) { c.gens.Invalidate(key, res) }

// Forget drops every answer cached for key and its write generations: the
// upstream said the key is not (or no longer) valid.
func (c *Cache) Forget(key callerkey.Key) {
	kh := key.ID()
	c.gens.forget(kh) // counts it forgotten, and drops its answers
	c.dropKeyHash(kh)
}

// dropKeyHash drops the answers of the key of hash kh, whose generations
// are forgotten (the generations' eviction callback).
func (c *Cache) dropKeyHash(kh string) { c.answers.removeKey(kh) }

// Stats returns how many GETs the cache answered fresh (hits) and how
// many it passed on (misses), since it was made.
func (c *Cache) Stats() (hits, misses int64) { return c.counts.fresh.Load(), c.counts.misses.Load() }

// Counts returns what the cache answered since it was made.
func (c *Cache) Counts() CacheCounts { return c.counts.counts() }

// Bytes returns the memory the cached answers take, as estimated.
func (c *Cache) Bytes() int64 { return c.answers.size() }

// Len returns the number of cached answers.
func (c *Cache) Len() int { return c.answers.len() }
