package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// Cache is a restcache.AnswerCache shared by the replicas: an answer
// cached by one answers the others, and a key's write through one makes
// every replica's older answers of that resource unreadable.
//
// A lookup is one round trip (a pipeline of three reads: the epoch, the
// key's generations, the answer), and an answer is sealed with its slot's
// name and the generations it was read under as additional data: an answer
// read before a write does not open after it, whatever replica asks. While
// Redis is down every lookup is a miss, answered by the upstream.
type Cache struct {
	s     *Store
	ttl   time.Duration
	local *restcache.Generations

	hits, misses atomic.Int64
}

// MaxAnswerBytes bounds one cached answer; larger ones are not kept (a
// page of 100 categories is about 30 KiB).
const MaxAnswerBytes = 1 << 20

// Cache returns the shared cache of GET answers, each kept for ttl. local
// is the numbering of this process's writes that the Coalescer keys
// in-flight GETs by: Invalidate bumps it too.
func (s *Store) Cache(ttl time.Duration, local *restcache.Generations) *Cache {
	if local == nil {
		local = &restcache.Generations{}
	}
	return &Cache{s: s, ttl: ttl, local: local}
}

// Generations returns the numbering of this process's writes, for the
// Coalescer.
func (c *Cache) Generations() *restcache.Generations { return c.local }

// allGenerations is the generation field that Forget bumps: every
// resource of the key.
const allGenerations = "*"

func generationsKey(key callerkey.Key) string { return prefix + "gen:" + key.ID() }

// answerKey names path's answer for key by a keyed hash: a path holds ids
// and filters, which a dump must not show.
func (c *Cache) answerKey(key callerkey.Key, path string) string {
	return prefix + "c:" + key.ID() + ":" + c.s.ring.Label(key.ID()+" "+path)
}

type sealedAnswer struct {
	Status    int                   `json:"s"`
	Body      []byte                `json:"b"`
	RateLimit *restclient.RateLimit `json:"r,omitempty"`
}

// FetchAs implements restcache.KeyedFetcher. Errors are never cached.
func (c *Cache) FetchAs(ctx context.Context, key callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	name := c.answerKey(key, path)
	res := restclient.ResourceOf(path)
	var (
		ad     []byte
		cached *restclient.Response
		held   bool // answers of res are not kept for key now (Hold)
	)
	// The request's first cached read also brings its key's rate-limit
	// reading, so that a hit costs one round trip in all.
	note := restcache.RateLimitNoteFrom(ctx)
	if note != nil && !note.Wanted() {
		note = nil
	}
	err := c.s.do(func(ctx context.Context) error {
		cmds, err := c.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Get(ctx, epochKey)
			p.HMGet(ctx, generationsKey(key), string(res), allGenerations, holdField(res))
			p.Get(ctx, name)
			if note != nil {
				p.Get(ctx, rateLimitKey(key))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) { // Nil: a key absent
			return err
		}
		epoch, _ := cmds[0].(*redis.StringCmd).Result()
		gens, _ := cmds[1].(*redis.SliceCmd).Result()
		if len(gens) == 3 {
			held = heldAt(gens[2], time.Now())
			gens = gens[:2]
		}
		ad = answerAD(name, epoch, gens)
		if b, err := cmds[2].(*redis.StringCmd).Bytes(); err == nil {
			cached = open(key, b, ad)
		}
		if note != nil {
			var rl restclient.RateLimit
			ok := false
			if b, err := cmds[3].(*redis.StringCmd).Bytes(); err == nil {
				rl, ok = openRateLimit(key, b)
			}
			note.Set(rl, ok)
		}
		return nil
	})
	if cached != nil {
		c.hits.Add(1)
		return cached, nil
	}
	c.misses.Add(1)
	if err == nil {
		// The Coalescer must not let this read join a GET of this process
		// sent before another replica's write.
		ctx = restcache.WithSharedGeneration(ctx, string(ad[len(name):]))
	}
	resp, ferr := fetch(ctx)
	if ferr != nil || err != nil || len(resp.Body) > MaxAnswerBytes || held || restclient.AwaitsReply(path, resp) {
		return resp, ferr // an answer awaiting its reply is never kept
	}
	// Sealed with the generations read before the fetch: a write made
	// meanwhile makes this answer unreadable, as it should be.
	if sealed, serr := seal(key, resp, ad); serr == nil {
		_ = c.s.do(func(ctx context.Context) error { return c.s.rdb.Set(ctx, name, sealed, c.ttl).Err() })
	}
	return resp, nil
}

// answerAD is what an answer is bound to: its slot, the epoch and the
// key's generations of its resource and of all resources.
func answerAD(name, epoch string, gens []any) []byte {
	ad := []byte(name)
	ad = append(ad, 0)
	ad = append(ad, epoch...)
	for _, g := range gens {
		ad = append(ad, 0)
		if s, ok := g.(string); ok {
			ad = append(ad, s...)
		}
	}
	return ad
}

func seal(key callerkey.Key, resp *restclient.Response, ad []byte) ([]byte, error) {
	plain, err := json.Marshal(sealedAnswer{Status: resp.Status, Body: resp.Body, RateLimit: resp.RateLimit})
	if err != nil {
		return nil, err
	}
	return key.Seal(plain, ad)
}

// open returns the answer sealed in b, or nil when it does not open: read
// before a write of the key, sealed by another key, or tampered with.
func open(key callerkey.Key, b, ad []byte) *restclient.Response {
	plain, err := key.Open(b, ad)
	if err != nil {
		return nil
	}
	var a sealedAnswer
	if json.Unmarshal(plain, &a) != nil {
		return nil
	}
	return &restclient.Response{Status: a.Status, Body: a.Body, RateLimit: a.RateLimit}
}

// Invalidate makes key's cached answers of res unreadable on every
// replica (a new random generation), and starts a new generation of this
// process's in-flight GETs. When Redis cannot record it, every replica's
// cached answers are dropped once Redis is back (the epoch).
func (c *Cache) Invalidate(key callerkey.Key, res restclient.Resource) {
	c.local.Invalidate(key, res)
	c.bump(key, string(res))
}

// Forget makes every answer cached for key unreadable: the upstream said
// the key is not (or no longer) valid.
func (c *Cache) Forget(key callerkey.Key) {
	c.bump(key, allGenerations)
}

// Hold keeps no answer of key's resource for d, on any replica
// (restcache.Holder): the field holdField(res) of the key's generations
// holds until when, in Unix milliseconds.
func (c *Cache) Hold(key callerkey.Key, res restclient.Resource, d time.Duration) {
	until := strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10)
	name := generationsKey(key)
	_ = c.s.do(func(ctx context.Context) error {
		_, err := c.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, name, holdField(res), until)
			p.Expire(ctx, name, max(c.generationsKeep(), d))
			return nil
		})
		return err
	})
}

func holdField(res restclient.Resource) string { return "hold:" + string(res) }

// heldAt reports whether a hold read from Redis (Unix milliseconds, or
// nil) is still on at now.
func heldAt(v any, now time.Time) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	return err == nil && now.UnixMilli() < ms
}

// generationsKeep is how long a key's generations outlive its last write:
// longer than any answer read before it is cached.
func (c *Cache) generationsKeep() time.Duration { return 2*c.ttl + time.Minute }

func (c *Cache) bump(key callerkey.Key, field string) {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	gen := hex.EncodeToString(b[:])
	name := generationsKey(key)
	err := c.s.do(func(ctx context.Context) error {
		_, err := c.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, name, field, gen)
			p.Expire(ctx, name, c.generationsKeep())
			return nil
		})
		return err
	})
	if err != nil {
		c.s.lostWrite.Store(true)
	}
}

// Stats returns the lookups answered from Redis and those passed on.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

var (
	_ restcache.AnswerCache = (*Cache)(nil)
	_ restcache.Holder      = (*Cache)(nil)
)
