package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
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
	fresh restcache.Freshness
	local *restcache.Generations

	counts restcache.StaleCounters
}

// MaxAnswerBytes bounds one cached answer; larger ones are not kept (a
// page of 100 categories is about 30 KiB).
const MaxAnswerBytes = 1 << 20

// Cache returns the shared cache of GET answers, each served for ttl
// whatever its kind, none stale (restcache.FixedFreshness). local is the
// numbering of this process's writes that the Coalescer keys in-flight
// GETs by: Invalidate bumps it too.
func (s *Store) Cache(ttl time.Duration, local *restcache.Generations) *Cache {
	return s.FreshCache(restcache.FixedFreshness(ttl), local)
}

// FreshCache returns the shared cache of GET answers, served by f: each
// answer is stored with the time it arrived, and whether it is fresh or
// stale is decided when it is read, by the reading key's quota as Redis
// holds it (read in the same round trip). f.Quota is not used.
func (s *Store) FreshCache(f restcache.Freshness, local *restcache.Generations) *Cache {
	if local == nil {
		local = &restcache.Generations{}
	}
	return &Cache{s: s, fresh: f, local: local}
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
	At        int64                 `json:"t,omitempty"` // arrived, Unix milliseconds
}

// FetchAs implements restcache.KeyedFetcher. Errors are never cached; an
// answer held stands in for one when the upstream cannot answer, within
// the Freshness' StaleMax (Response.Stale says so).
func (c *Cache) FetchAs(ctx context.Context, key callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	name := c.answerKey(key, path)
	ad, l, held, err := c.lookup(ctx, key, name, path)
	if err == nil && !l.Fresh {
		// The Coalescer must not let this read join a GET of this process
		// sent before another replica's write.
		ctx = restcache.WithSharedGeneration(ctx, string(ad[len(name):]))
	}
	asked := time.Now()
	resp, fetched, ferr := c.counts.Serve(ctx, l, fetch)
	if fetched && held && restclient.ReplyCame(path, resp) {
		c.release(key, path, asked)
	}
	if !fetched || err != nil || len(resp.Body) > MaxAnswerBytes || held || restclient.AwaitsReply(path, resp) {
		return resp, ferr // an answer awaiting its reply is never kept
	}
	// Sealed with the generations read before the fetch: a write made
	// meanwhile makes this answer unreadable, as it should be.
	if sealed, serr := seal(key, resp, ad, c.fresh.Time()); serr == nil {
		_ = c.s.do(func(ctx context.Context) error {
			return c.s.rdb.Set(ctx, name, sealed, redisTTL(c.fresh.Keep(path))).Err()
		})
	}
	return resp, nil
}

// lookup reads, in one round trip, what Redis holds for key's GET of
// path (slot name): the answer judged by the freshness rule, the
// additional data it is sealed with, and whether answers of its resource
// are held back (Hold). The request's first cached read also brings its
// key's rate-limit reading (the freshness follows it, and the planner
// reads it from the note), so that a hit costs one round trip in all.
func (c *Cache) lookup(ctx context.Context, key callerkey.Key, name, path string) (ad []byte, l restcache.Lookup, held bool, err error) {
	res := restclient.ResourceOf(path)
	note := restcache.RateLimitNoteFrom(ctx)
	var noted restclient.RateLimit
	notedOK, read := false, false
	if note != nil {
		noted, notedOK, read = note.Get()
	}
	err = c.s.do(func(ctx context.Context) error {
		cmds, err := c.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Get(ctx, epochKey)
			p.HMGet(ctx, generationsKey(key), string(res), allGenerations, holdField(res), string(restclient.PartOf(path)))
			p.Get(ctx, name)
			if !read {
				p.Get(ctx, rateLimitKey(key))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) { // Nil: a key absent
			return err
		}
		epoch, _ := cmds[0].(*redis.StringCmd).Result()
		gens, _ := cmds[1].(*redis.SliceCmd).Result()
		if len(gens) == 4 {
			// The resource's, every resource's, the hold, the part's
			// (restclient.PartOf: the list or one record).
			held = heldAt(gens[2], time.Now())
			gens = []any{gens[0], gens[1], gens[3]}
		}
		ad = answerAD(name, epoch, gens)
		if !read {
			if b, err := cmds[3].(*redis.StringCmd).Bytes(); err == nil {
				noted, notedOK = openRateLimit(key, b)
			}
			if note != nil {
				note.Set(noted, notedOK)
			}
		}
		if b, err := cmds[2].(*redis.StringCmd).Bytes(); err == nil {
			if cached, at := open(key, b, ad); cached != nil {
				l = c.fresh.Judge(ctx, path, cached, at, noted, notedOK)
			}
		}
		return nil
	})
	return ad, l, held, err
}

// redisTTL is d as a Redis expiry: 0 (none) for what is kept for ever.
func redisTTL(d time.Duration) time.Duration {
	if d > 100*365*24*time.Hour {
		return 0
	}
	return d
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

func seal(key callerkey.Key, resp *restclient.Response, ad []byte, at time.Time) ([]byte, error) {
	plain, err := json.Marshal(sealedAnswer{Status: resp.Status, Body: resp.Body, RateLimit: resp.RateLimit, At: at.UnixMilli()})
	if err != nil {
		return nil, err
	}
	return key.Seal(plain, ad)
}

// open returns the answer sealed in b and when it arrived, or nil when it
// does not open: read before a write of the key, sealed by another key, or
// tampered with.
func open(key callerkey.Key, b, ad []byte) (*restclient.Response, time.Time) {
	plain, err := key.Open(b, ad)
	if err != nil {
		return nil, time.Time{}
	}
	var a sealedAnswer
	if json.Unmarshal(plain, &a) != nil {
		return nil, time.Time{}
	}
	return &restclient.Response{Status: a.Status, Body: a.Body, RateLimit: a.RateLimit}, time.UnixMilli(a.At)
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

// holdScript sets, in a hold's field (KEYS[1] the key's generations,
// ARGV[1] the field), the hold of part ARGV[2] ("" for one not known by
// its id) until ARGV[3] (Unix milliseconds), dropping the holds ended by
// ARGV[4] (now), and keeps the generations ARGV[5] milliseconds. The
// field holds "part=until" entries separated by commas: the resource is
// held while any of its parts is.
var holdScript = redis.NewScript(`
local v = redis.call('hget', KEYS[1], ARGV[1]) or ''
local out = {}
for id, ms in string.gmatch(v, '([^,=]*)=(%d+)') do
  if id ~= ARGV[2] and tonumber(ms) > tonumber(ARGV[4]) then out[#out+1] = id .. '=' .. ms end
end
out[#out+1] = ARGV[2] .. '=' .. ARGV[3]
redis.call('hset', KEYS[1], ARGV[1], table.concat(out, ','))
redis.call('pexpire', KEYS[1], ARGV[5])
return 1
`)

// Hold keeps no answer of key's resource for d, on any replica
// (restcache.Holder): res is the part awaiting a change ("chats/<id>"),
// or the resource when which part is not known. The field
// holdField(resource) of the key's generations holds each part's hold
// (holdScript).
func (c *Cache) Hold(key callerkey.Key, res restclient.Resource, d time.Duration) {
	now := time.Now()
	_ = c.s.do(func(ctx context.Context) error {
		return holdScript.Run(ctx, c.s.rdb, []string{generationsKey(key)}, holdField(restclient.ResourceOf(string(res))),
			holdPart(res), now.Add(d).UnixMilli(), now.UnixMilli(), max(c.generationsKeep(), d).Milliseconds()).Err()
	})
}

// holdPart is the id of part res in a hold's field: "" for a resource, or
// an id the field's separators would break.
func holdPart(res restclient.Resource) string {
	_, id, _ := strings.Cut(string(res), "/")
	if strings.ContainsAny(id, ",=") {
		return ""
	}
	return id
}

// releaseScript deletes the hold of part ARGV[2] from a hold's field
// (KEYS[1] the key's generations, ARGV[1] the field; see holdScript), or,
// when that part has none, the hold of a part not known by its id (""),
// if it began before ARGV[3] (Unix milliseconds), holds lasting ARGV[4]
// milliseconds. The others' holds stay.
var releaseScript = redis.NewScript(`
local v = redis.call('hget', KEYS[1], ARGV[1])
if not v then return 0 end
local entries, target = {}, ''
for id, ms in string.gmatch(v, '([^,=]*)=(%d+)') do
  entries[#entries+1] = {id, ms}
  if id == ARGV[2] then target = id end
end
local out, done = {}, 0
for _, e in ipairs(entries) do
  if done == 0 and e[1] == target and tonumber(e[2]) - tonumber(ARGV[4]) < tonumber(ARGV[3]) then
    done = 1
  else
    out[#out+1] = e[1] .. '=' .. e[2]
  end
end
if done == 0 then return 0 end
if #out == 0 then return redis.call('hdel', KEYS[1], ARGV[1]) end
redis.call('hset', KEYS[1], ARGV[1], table.concat(out, ','))
return 1
`)

// release ends key's hold of the chat read at path on every replica if it
// began before asked: a chat asked for after the message was sent shows
// the assistant's reply (see restcache.Cache's).
func (c *Cache) release(key callerkey.Key, path string, asked time.Time) {
	_ = c.s.do(func(ctx context.Context) error {
		return releaseScript.Run(ctx, c.s.rdb, []string{generationsKey(key)}, holdField(restclient.ResourceOf(path)),
			holdPart(restclient.PartOf(path)), asked.UnixMilli(), restcache.ReplyWait.Milliseconds()).Err()
	})
}

func holdField(res restclient.Resource) string { return "hold:" + string(res) }

// heldAt reports whether a hold field read from Redis (holdScript's
// entries, or nil) holds any part at now.
func heldAt(v any, now time.Time) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for e := range strings.SplitSeq(s, ",") {
		until := e // a hold set before holds had parts: its time alone
		if _, t, ok := strings.Cut(e, "="); ok {
			until = t
		}
		if ms, err := strconv.ParseInt(until, 10, 64); err == nil && now.UnixMilli() < ms {
			return true
		}
	}
	return false
}

// generationsKeep is how long a key's generations outlive its last write:
// longer than any answer read before it is cached.
func (c *Cache) generationsKeep() time.Duration {
	keep := redisTTL(c.fresh.KeepAtMost())
	if keep == 0 {
		return 30 * 24 * time.Hour // answers kept for ever: a month
	}
	return 2*keep + time.Minute
}

// maxPartFields bounds the part fields (restclient.PartOf: "chats/<id>")
// a key's generations hold; past it they are folded (bumpScript).
const maxPartFields = 256

// bumpScript sets field ARGV[1] of a key's generations (KEYS[1]) to the
// new generation ARGV[2] and keeps them ARGV[3] milliseconds. When that
// leaves more than ARGV[4] fields, every part's field ("res/id") goes and
// its resource's gets the new generation: an answer sealed with a part's
// generation no longer opens, nor one sealed before any write to the
// part (its resource's generation moved), so no write is forgotten.
var bumpScript = redis.NewScript(`
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
if redis.call('hlen', KEYS[1]) > tonumber(ARGV[4]) then
  for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
    local slash = string.find(f, '/', 1, true)
    if slash and string.sub(f, 1, 5) ~= 'hold:' then
      redis.call('hdel', KEYS[1], f)
      redis.call('hset', KEYS[1], string.sub(f, 1, slash - 1), ARGV[2])
    end
  end
end
redis.call('pexpire', KEYS[1], ARGV[3])
return 1
`)

func (c *Cache) bump(key callerkey.Key, field string) {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	gen := hex.EncodeToString(b[:])
	err := c.s.do(func(ctx context.Context) error {
		return bumpScript.Run(ctx, c.s.rdb, []string{generationsKey(key)}, field, gen,
			c.generationsKeep().Milliseconds(), maxPartFields).Err()
	})
	if err != nil {
		c.s.lostWrite.Store(true)
	}
}

// Stats returns the lookups answered fresh from Redis and those passed on.
func (c *Cache) Stats() (hits, misses int64) {
	n := c.counts.Counts()
	return n.Fresh, n.Misses
}

// Counts returns what the cache answered: fresh, stale, passed on.
func (c *Cache) Counts() restcache.CacheCounts { return c.counts.Counts() }

var (
	_ restcache.AnswerCache = (*Cache)(nil)
	_ restcache.Holder      = (*Cache)(nil)
)
