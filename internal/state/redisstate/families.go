package redisstate

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
)

// FamilySizes is a restcache.FamilySizeStore shared by the replicas: the
// size of a key's family seen by one plans the lookups of all. What this
// replica saw is kept in memory too, and answers while Redis is down.
type FamilySizes struct {
	s     *Store
	local restcache.FamilySizes
}

// FamilySizes returns the shared family-size store.
func (s *Store) FamilySizes() *FamilySizes { return &FamilySizes{s: s} }

// familySizeKeep is how long a family's size is kept after it was last
// seen: a planning hint, worth a day.
const familySizeKeep = 24 * time.Hour

func familyKey(key callerkey.Key) string { return prefix + "fam:" + key.ID() }

// Observe records the size of key's family ("" class) or of one
// classification of it.
func (f *FamilySizes) Observe(key callerkey.Key, class string, n int) {
	f.local.Observe(key, class, n)
	name := familyKey(key)
	sealed, err := key.Seal(strconv.AppendInt(nil, int64(n), 10), []byte(name+"\x00"+class))
	if err != nil {
		return
	}
	_ = f.s.do(func(ctx context.Context) error {
		_, err := f.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, name, class, sealed)
			p.Expire(ctx, name, familySizeKeep)
			return nil
		})
		return err
	})
}

// Get returns the last size any replica saw, or this replica's own while
// Redis does not answer.
func (f *FamilySizes) Get(key callerkey.Key, class string) (int, bool) {
	name := familyKey(key)
	var (
		n      int
		shared bool
	)
	err := f.s.do(func(ctx context.Context) error {
		b, err := f.s.rdb.HGet(ctx, name, class).Bytes()
		if err != nil {
			return err
		}
		plain, err := key.Open(b, []byte(name+"\x00"+class))
		if err != nil {
			return nil // sealed under another secret: none
		}
		if v, err := strconv.Atoi(string(plain)); err == nil {
			n, shared = v, true
		}
		return nil
	})
	if err != nil {
		return f.local.Get(key, class)
	}
	return n, shared
}

// Forget drops what is known of key, here and in Redis.
func (f *FamilySizes) Forget(key callerkey.Key) {
	f.local.Forget(key)
	_ = f.s.do(func(ctx context.Context) error { return f.s.rdb.Del(ctx, familyKey(key)).Err() })
}

var _ restcache.FamilySizeStore = (*FamilySizes)(nil)
