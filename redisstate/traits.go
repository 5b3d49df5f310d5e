package redisstate

import (
	"context"

	"suregql/restcache"
)

// Traits is a restcache.TraitStore shared by the replicas: what one learnt
// of the upstream server (from any caller's answer) plans the calls of all.
// Traits describe the server, not a caller, so they are neither hashed by
// key nor sealed; every replica keeps its own copy in memory too, and asks
// Redis only for a trait it does not know, so a trait costs a round trip
// when it changes, not per request.
type Traits struct {
	s     *Store
	name  string
	local restcache.Traits
}

// Traits returns the shared store of the traits of the upstream at
// baseURL (replicas in front of different servers do not mix them).
func (s *Store) Traits(baseURL string) *Traits {
	return &Traits{s: s, name: prefix + "upstream:" + s.ring.Key(baseURL).ID()}
}

// Get returns this replica's value of trait, or else the shared one.
func (t *Traits) Get(trait string) (string, bool) {
	if v, ok := t.local.Get(trait); ok {
		return v, true
	}
	var v string
	err := t.s.do(func(ctx context.Context) error {
		var err error
		v, err = t.s.rdb.HGet(ctx, t.name, trait).Result()
		return err
	})
	if err != nil || v == "" {
		return "", false
	}
	t.local.Learn(trait, v)
	return v, true
}

// Learn records what an answer showed, in Redis when it is news.
func (t *Traits) Learn(trait, value string) {
	if !t.local.Changed(trait, value) {
		return
	}
	_ = t.s.do(func(ctx context.Context) error {
		p := t.s.rdb.TxPipeline()
		p.HSet(ctx, t.name, trait, value)
		p.Expire(ctx, t.name, restcache.TraitKeep)
		_, err := p.Exec(ctx)
		return err
	})
}

var _ restcache.TraitStore = (*Traits)(nil)
