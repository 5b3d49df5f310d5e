package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// RateLimits is a restcache.RateLimitStore shared by the replicas: a 429
// (or remaining: 0) seen by one makes every replica refuse the key until
// its reset, and each reports the newest reading any replica saw. What
// this replica saw (or read) is kept in memory too, and answers while Redis
// is down.
type RateLimits struct {
	s     *Store
	local restcache.RateLimits
	now   func() time.Time
}

// RateLimits returns the shared rate-limit store.
func (s *Store) RateLimits() *RateLimits { return &RateLimits{s: s, now: s.now} }

// rateLimitKeep is how long a reading outlives its window's reset: the
// figures keep answering extensions.upstream, then Redis drops them.
const rateLimitKeep = time.Hour

// observeTries bounds the optimistic read-compare-write of Observe when
// other replicas write the same key at the same moment.
const observeTries = 3

type sealedRateLimit struct {
	Unlimited bool      `json:"u,omitempty"`
	Limit     int       `json:"l"`
	Remaining int       `json:"r"`
	Reset     int64     `json:"s"` // nanoseconds
	ResetAt   time.Time `json:"t"`
}

func rateLimitKey(key callerkey.Key) string { return prefix + "rl:" + key.ID() }

// Observe records rl unless a newer reading is known, here or in Redis.
// The compare and the write are one transaction (WATCH), so a replica
// that read an older answer last never overwrites a newer reading.
func (r *RateLimits) Observe(key callerkey.Key, rl restclient.RateLimit) {
	r.local.Observe(key, rl)
	name := rateLimitKey(key)
	_ = r.s.do(func(ctx context.Context) error {
		for range observeTries {
			err := r.s.rdb.Watch(ctx, func(tx *redis.Tx) error {
				if old, ok := r.read(ctx, tx, key); ok && !restclient.Newer(rl, old) {
					return nil
				}
				sealed, err := r.seal(key, rl)
				if err != nil {
					return err
				}
				ttl := max(rl.ResetAt.Sub(r.now()), 0) + rateLimitKeep
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, name, sealed, ttl)
					return nil
				})
				return err
			}, name)
			if !errors.Is(err, redis.TxFailedErr) {
				return err
			}
		}
		return nil // others kept writing: one of theirs stands, as new as this
	})
}

// Get returns the newest reading of key any replica saw: Redis's, or
// while Redis does not answer, what this replica saw itself.
func (r *RateLimits) Get(key callerkey.Key) (restclient.RateLimit, bool) {
	var (
		shared restclient.RateLimit
		ok     bool
	)
	err := r.s.do(func(ctx context.Context) error {
		var err error
		shared, ok, err = r.get(ctx, r.s.rdb, key)
		return err
	})
	if err != nil {
		return r.local.Get(key)
	}
	if ok {
		r.local.Observe(key, shared) // answers while Redis is down
	}
	return shared, ok
}

// Exhausted reports whether key is known to have no request left at now.
func (r *RateLimits) Exhausted(key callerkey.Key, now time.Time) (time.Duration, bool) {
	rl, ok := r.Get(key)
	if !ok {
		return 0, false
	}
	return rl.Exhausted(now)
}

// Forget drops what is known of key, here and in Redis.
func (r *RateLimits) Forget(key callerkey.Key) {
	r.local.Forget(key)
	_ = r.s.do(func(ctx context.Context) error { return r.s.rdb.Del(ctx, rateLimitKey(key)).Err() })
}

func (r *RateLimits) read(ctx context.Context, c redis.Cmdable, key callerkey.Key) (restclient.RateLimit, bool) {
	rl, ok, _ := r.get(ctx, c, key)
	return rl, ok
}

// get reads and opens key's reading; a reading that does not open (sealed
// under another secret, tampered with) is none.
func (r *RateLimits) get(ctx context.Context, c redis.Cmdable, key callerkey.Key) (restclient.RateLimit, bool, error) {
	b, err := c.Get(ctx, rateLimitKey(key)).Bytes()
	if err != nil {
		return restclient.RateLimit{}, false, err
	}
	rl, ok := openRateLimit(key, b)
	return rl, ok, nil
}

// openRateLimit opens a sealed reading of key; one that does not open
// (sealed under another secret, tampered with) is none.
func openRateLimit(key callerkey.Key, b []byte) (restclient.RateLimit, bool) {
	plain, err := key.Open(b, []byte(rateLimitKey(key)))
	if err != nil {
		return restclient.RateLimit{}, false
	}
	var v sealedRateLimit
	if json.Unmarshal(plain, &v) != nil {
		return restclient.RateLimit{}, false
	}
	return restclient.RateLimit{Unlimited: v.Unlimited, Limit: v.Limit, Remaining: v.Remaining, Reset: time.Duration(v.Reset), ResetAt: v.ResetAt}, true
}

func (r *RateLimits) seal(key callerkey.Key, rl restclient.RateLimit) ([]byte, error) {
	plain, err := json.Marshal(sealedRateLimit{Unlimited: rl.Unlimited, Limit: rl.Limit, Remaining: rl.Remaining, Reset: int64(rl.Reset), ResetAt: rl.ResetAt})
	if err != nil {
		return nil, err
	}
	return key.Seal(plain, []byte(rateLimitKey(key)))
}

var _ restcache.RateLimitStore = (*RateLimits)(nil)
