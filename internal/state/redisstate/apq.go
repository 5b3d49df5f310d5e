package redisstate

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/v9"

	"github.com/suregql/suregql/internal/state/callerkey"
)

// PersistedQueries is the store of automatic persisted queries (hash to
// query text) shared by the replicas: a hash registered through one works
// through all. Local, this process's own bounded cache, answers first; a
// query found in Redis is added to it.
//
// A query is stored under a keyed hash of its hash and sealed with a key
// derived from its hash: a dump shows neither the hashes nor the queries,
// and only a request that sends the hash can read its query.
type PersistedQueries struct {
	s        *Store
	local    graphql.Cache[string]
	ttl      time.Duration
	maxBytes int
}

// DefaultPersistedQueryTTL is how long Redis keeps a persisted query after
// it was registered: clients register again on PersistedQueryNotFound.
const DefaultPersistedQueryTTL = 24 * time.Hour

// PersistedQueries returns the shared store of persisted queries in front
// of which local answers; queries longer than maxQueryBytes are not kept
// (the limits would refuse them), and each is kept for ttl (0 means
// DefaultPersistedQueryTTL).
func (s *Store) PersistedQueries(local graphql.Cache[string], maxQueryBytes int, ttl time.Duration) *PersistedQueries {
	if ttl <= 0 {
		ttl = DefaultPersistedQueryTTL
	}
	return &PersistedQueries{s: s, local: local, ttl: ttl, maxBytes: maxQueryBytes}
}

func (q *PersistedQueries) name(hash string) string {
	return prefix + "apq:" + q.s.ring.Label("apq "+hash)
}

// Get implements graphql.Cache: this process's cache, else Redis's.
func (q *PersistedQueries) Get(ctx context.Context, hash string) (string, bool) {
	if query, ok := q.local.Get(ctx, hash); ok {
		return query, true
	}
	name := q.name(hash)
	var query string
	found := false
	_ = q.s.do(func(ctx context.Context) error {
		b, err := q.s.rdb.Get(ctx, name).Bytes()
		if err != nil {
			return err
		}
		// A wrong hash for the query cannot have been stored: gqlgen
		// checks the hash of a query before Add.
		if plain, err := callerkey.Open(q.s.ring.Cipher(hash), b, []byte(name)); err == nil {
			query, found = string(plain), true
		}
		return nil
	})
	if found {
		q.local.Add(ctx, hash, query)
	}
	return query, found
}

// Bounds of the persisted queries in Redis: what one key may register, and
// all keys together, within a TTL; past them a query is kept in this
// process only (and registered again by its client when another replica
// misses it). Without them, registrations could fill Redis and, under its
// eviction policy, push out cached answers and rate-limit knowledge.
const (
	MaxPersistedBytesPerKey = 1 << 20  // 1 MiB: a client's few dozen documents
	MaxPersistedBytes       = 64 << 20 // 64 MiB for every key together
)

// Add implements graphql.Cache: here only. Queries reach Redis through
// AddFor, which knows whose they are and bounds them.
func (q *PersistedQueries) Add(ctx context.Context, hash, query string) {
	q.local.Add(ctx, hash, query)
}

// AddFor registers a query for the caller key: here, and in Redis while
// key's registrations and everybody's stay within MaxPersistedBytesPerKey
// and MaxPersistedBytes over the TTL (counters that expire with it).
func (q *PersistedQueries) AddFor(ctx context.Context, key callerkey.Key, hash, query string) {
	q.local.Add(ctx, hash, query)
	if len(query) > q.maxBytes {
		return
	}
	name := q.name(hash)
	sealed := callerkey.Seal(q.s.ring.Cipher(hash), []byte(query), []byte(name))
	perKey, total := prefix+"apqbytes:"+key.ID(), prefix+"apqbytes"
	n := int64(len(sealed))
	_ = q.s.do(func(ctx context.Context) error {
		var mine, all *redis.IntCmd
		_, err := q.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			mine = p.IncrBy(ctx, perKey, n)
			p.ExpireNX(ctx, perKey, q.ttl)
			all = p.IncrBy(ctx, total, n)
			p.ExpireNX(ctx, total, q.ttl)
			return nil
		})
		if err != nil {
			return err
		}
		if mine.Val() > MaxPersistedBytesPerKey || all.Val() > MaxPersistedBytes {
			// Over a bound: give the bytes back, keep the query here only.
			_, err := q.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.DecrBy(ctx, perKey, n)
				p.DecrBy(ctx, total, n)
				return nil
			})
			return err
		}
		return q.s.rdb.Set(ctx, name, sealed, q.ttl).Err()
	})
}

var _ graphql.Cache[string] = (*PersistedQueries)(nil)
